// One training run of a built model for max_iters iterations (GA micro-batches each, one
// AdamW step each), timed by the metric contract of DESIGN.md: the device is synchronised
// at the end of every iteration and every per-iteration time is kept. Failures (OOM, NaN
// loss, a stop request) end the loop with a status instead of an exception, so the caller
// can still report what was measured.
#pragma once

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "model/gpt.hpp"

namespace tokbench::train {

enum class DtypeMode { fp32, bf16_true, bf16_mixed };

struct DataOptions {
  // Empty path: random tokens drawn as the reference benchmark draws them (ids 0..99),
  // seeded. Otherwise a file of little-endian uint16 or uint32 tokens read through mmap.
  std::filesystem::path token_file;
  int token_bytes = 2;  // 2 (uint16) or 4 (uint32) for token_file
};

struct AdamWOptions {
  double lr = 5e-4;
  double weight_decay = 0.1;
  double beta1 = 0.9;
  double beta2 = 0.95;
  double eps = 1e-8;
};

struct TrainOptions {
  int64_t micro_batch = 1;
  int64_t seq_len = 0;      // T; the model's block_size must be >= T
  int64_t grad_accum = 1;   // GA micro-batches per iteration
  int64_t max_iters = 45;
  int64_t warmup_iters = 25;
  uint64_t seed = 1337;
  DtypeMode dtype = DtypeMode::fp32;
  AdamWOptions adamw;
  DataOptions data;
  // CPU only: an allocation cap in bytes for the counting allocator; exceeding it raises
  // an out-of-memory error as a real device would (used by tests to drive the OOM path).
  std::optional<int64_t> cpu_memory_cap_bytes;
};

enum class RunStatus { ok, oom, nan, interrupted, error };
const char* to_string(RunStatus status);

struct IterationRecord {
  int64_t index = 0;       // 0-based iteration number
  bool warmup = false;
  double seconds = 0;      // this iteration, device synchronised at its end
  double loss = 0;         // last micro-batch's loss × GA (the un-divided loss)
  double end_time = 0;     // seconds since the loop started, at this iteration's end
};

struct MemoryPeaks {
  int64_t allocated_bytes = 0;  // peak bytes held by tensors (caching allocator / CPU counter)
  int64_t reserved_bytes = 0;   // peak reserved by the allocator (CPU: same as allocated)
  int64_t peak_rss_bytes = 0;   // process peak resident set (CPU runs)
};

struct TrainResult {
  RunStatus status = RunStatus::ok;
  std::string message;                     // why a run ended early
  std::vector<IterationRecord> iterations; // every finished iteration, warm-up included
  double measured_window_seconds = 0;      // end of last warm-up iteration -> end of last measured
  int64_t measured_iters = 0;              // M
  MemoryPeaks memory;
  // Seconds spent outside forward, backward and the optimizer (data, bookkeeping) over the
  // measured iterations: the harness overhead.
  double overhead_seconds = 0;
};

// Called after every iteration (progress display, live Throughput updates).
using IterationCallback = std::function<void(const IterationRecord&)>;

// Trains `model` (already on its device and dtype). `stop` is polled at iteration ends.
TrainResult run_training(model::GPT& model, const torch::Device& device, const TrainOptions& options,
                         const IterationCallback& on_iteration, const std::atomic<bool>* stop);

}  // namespace tokbench::train
