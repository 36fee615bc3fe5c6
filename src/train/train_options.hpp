// The options of one training run as the timed loop takes them (train_loop.hpp): the batch
// shape, the iterations, the seed, the numerics, AdamW, the data and the CPU memory cap. A
// run's resolved configuration (run/run_plan.hpp) holds one of these and hands it down by
// reference, so each figure has one home. Torch-free, so that configuration code compiles
// without LibTorch's headers.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>

#include "model/train_precision.hpp"
#include "train/zero_grad.hpp"

namespace tokbench::train {

struct AdamWOptions {
  double lr = 5e-4;
  double weight_decay = 0.1;
  double beta1 = 0.9;
  double beta2 = 0.95;
  double eps = 1e-8;
  // Unset: fused, on CUDA (as the reference) and on the CPU (ATen's CPU kernel; several
  // times faster than the per-parameter loop, which is Python's CPU default: a Python
  // comparison must pass fused=True to match). false selects the per-parameter loop.
  std::optional<bool> fused;
};

struct DataOptions {
  // Empty path: random tokens drawn as the reference benchmark draws them (ids 0..99),
  // seeded. Otherwise a file of little-endian uint16 or uint32 tokens read through mmap.
  std::filesystem::path token_file;
  int token_bytes = 2;  // 2 (uint16) or 4 (uint32) for token_file
  bool sequential = false;  // token_file windows in file order (wrapping) instead of random
  // --dynamic: each sequence's length drawn in [10, T] and the rest padded (sequence_lengths.hpp).
  bool dynamic_lengths = false;
  // The seed of the tokens and of --dynamic's lengths (--data-seed; the run's seed unless given).
  uint64_t seed = 1337;
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
