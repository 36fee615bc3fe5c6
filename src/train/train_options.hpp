// The options of one training run as the timed loop takes them (train_loop.hpp): the batch
// shape, the iterations, the seed, the numerics, AdamW, the data and the CPU memory cap. A
// run's resolved configuration (run/run_plan.hpp) holds one of these and hands it down by
// reference, so each figure has one home. The training and data sections of the configuration
// (config/training.hpp, config/data.hpp) are carried whole, as resolve copied them, so an option
// added to one of them reaches the step with no line here. Torch-free, so that configuration
// code compiles without LibTorch's headers.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>

#include "config/data.hpp"
#include "config/training.hpp"
#include "model/train_precision.hpp"
#include "train/zero_grad.hpp"

namespace tokbench::train {

// The training section as resolve copied it (lr, weight_decay, beta1, beta2, eps: AdamW's; the
// section's other values, read by the loop or ignored) plus what only the optimizer knows.
struct AdamWOptions : config::TrainingSection {
  // Unset: fused, on CUDA (as the reference) and on the CPU (ATen's CPU kernel; several
  // times faster than the per-parameter loop, which is Python's CPU default: a Python
  // comparison must pass fused=True to match). false selects the per-parameter loop.
  std::optional<bool> fused;
};

// The data section (data_seed: the tokens' and --dynamic's lengths' seed, which resolve sets from
// the row's default, --seed; unset only in options built without resolve, which draw with the
// run's seed) plus what resolve reads from its words.
struct DataOptions : config::DataSection {
  // Empty path: random tokens drawn as the reference benchmark draws them (ids 0..99),
  // seeded. Otherwise a file of little-endian uint16 or uint32 tokens read through mmap.
  std::filesystem::path token_file;
  int token_bytes = 2;  // 2 (uint16) or 4 (uint32) for token_file
  bool sequential = false;  // token_file windows in file order (wrapping) instead of random
  // --dynamic: each sequence's length drawn in [10, T] and the rest padded (sequence_lengths.hpp).
  bool dynamic_lengths = false;
};

struct TrainOptions {
  int64_t micro_batch = 1;  // B, sequences per micro-batch on one device
  int64_t seq_len = 0;      // T; the model's block_size must be >= T
  int64_t grad_accum = 1;   // GA micro-batches per iteration
  int64_t max_iters = 45;
  int64_t warmup_iters = 25;
  uint64_t seed = 1337;
  model::TrainPrecision dtype = model::TrainPrecision::fp32;
  AdamWOptions adamw;
  ZeroGrad zero_grad = ZeroGrad::none;  // gradients freed after each step, as the reference
  DataOptions data;
  // CPU only: an allocation cap in bytes for the counting allocator; exceeding it raises
  // an out-of-memory error as a real device would (used by tests to drive the OOM path).
  std::optional<int64_t> cpu_memory_cap_bytes;
  // Intra-op threads (at::set_num_threads) for the run; 0 keeps LibTorch's default (the
  // number of physical cores, as in Python).
  int num_threads = 0;
};

}  // namespace tokbench::train
