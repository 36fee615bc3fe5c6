// The timed loop: max_iters iterations of a TrainStep (GA micro-batches each, one optimizer
// step each), timed by the metric contract (docs/PERFORMANCE.md): the device is synchronised
// at the end of every iteration and every per-iteration time is kept. Failures (OOM, NaN
// loss, a stop request, a failed collective) end the loop with a status instead of an
// exception, so the caller can still report what was measured. run_training is the
// single-device convenience: the eager step over a model plus the token batcher.
#pragma once

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "model/gpt.hpp"
#include "train/run_status.hpp"
#include "train/dtype_mode.hpp"
#include "train/memory_tracking.hpp"
#include "train/optimizer.hpp"
#include "train/reference_gemm.hpp"
#include "train/token_data.hpp"
#include "train/train_options.hpp"
#include "train/time_account_pass.hpp"
#include "train/train_step.hpp"
#include "train/unit_timings.hpp"

namespace tokbench::train {

// TrainOptions (with AdamWOptions and DataOptions) is in train/train_options.hpp,
// model::TrainPrecision in model/train_precision.hpp (its param_dtype and dtype_supported in
// train/dtype_mode.hpp), MemoryPeaks in train/memory_tracking.hpp.

struct IterationRecord {
  int64_t index = 0;       // 0-based iteration number
  bool warmup = false;
  double seconds = 0;      // this iteration, device synchronised at its end
  double loss = 0;         // last micro-batch's loss × GA (the un-divided loss)
  double end_time = 0;     // seconds since the loop started, at this iteration's end
  // Of `seconds`, the part outside forward, backward and the optimizer (data, bookkeeping,
  // the previous iteration's callback); host time on CUDA.
  double overhead_seconds = 0;
  // Of `seconds`, the time spent waiting for collectives not hidden behind compute.
  double exposed_comm_seconds = 0;
  // This rank's real (unpadded) tokens over the iteration's GA micro-batches: B·T·GA, or fewer
  // with --dynamic.
  int64_t real_tokens = 0;
};

struct TrainResult {
  RunStatus status = RunStatus::ok;
  std::string message;                     // why a run ended early
  std::vector<IterationRecord> iterations; // every finished iteration, warm-up included
  double measured_window_seconds = 0;      // end of last warm-up iteration -> end of last measured
  int64_t measured_iters = 0;              // M
  MemoryPeaks memory;
  MemoryBreakdown memory_breakdown;  // this process's, measured over the same iterations as `memory`
  // Seconds spent outside forward, backward and the optimizer (data, bookkeeping) over the
  // measured iterations: the harness overhead.
  // On CUDA these are host seconds: time the host spends there while kernels may still be
  // running, so it costs throughput only when the device waits for the host.
  double overhead_seconds = 0;
  int64_t optimizer_steps = 0;  // the optimizer's own step count at the end (= iterations run)
  // --profile: what became of the trace ("wrote ..." or why not); empty without --profile.
  std::string profile_message;
  std::string memory_snapshot_message;  // where the memory snapshot went, or why none; "" if not asked
  // Asked for and not written: a file the user asked for is missing, which the run reports as
  // its own output failing (exit 8, docs/run.md), whatever the training did.
  bool memory_snapshot_failed = false;
  // The per-unit timing pass's figures (LoopOptions::unit_timing_iters); none when not asked
  // for, when the run was not ok, or when the pass failed or was stopped (the message says why).
  std::optional<UnitTimings> unit_timings;
  std::string unit_timing_message;
  // The time account's profiled pass (LoopOptions::time_account_iters); none when not asked
  // for, when the run was not ok, or when the pass failed or was stopped (the message says why).
  std::optional<ProfiledTimeAccount> time_account;
  std::string time_account_message;
  // The reference probe (LoopOptions::reference_probe_repeats): none when not asked for; its
  // after-side empty when the run was not ok.
  std::optional<ReferenceProbeTimes> reference_probe;
  bool fused_adamw = false;     // which AdamW implementation ran (optimizer.hpp)
  std::string graph_fallback;   // why a CUDA graph capture was abandoned (TrainStep::graph_fallback)
};

// Called after every iteration (progress display, live Throughput updates).
using IterationCallback = std::function<void(const IterationRecord&)>;

struct LoopOptions {
  int64_t grad_accum = 1;
  int64_t max_iters = 45;
  int64_t warmup_iters = 25;
  std::optional<int64_t> cpu_memory_cap_bytes;  // see TrainOptions
  // Non-empty: after the measured window (of an ok run), profile_iters more iterations are
  // run under the Kineto profiler and their Chrome trace written here (profile_trace.hpp).
  // They are neither recorded nor timed: the reported metrics stay the profiler-free ones.
  std::filesystem::path profile_path;
  int64_t profile_iters = 3;
  // After the measured window (of an ok run), this many more iterations in which each unit's
  // forward, backward and optimizer time is marked (unit_timing_pass.hpp); neither recorded
  // nor timed, after the memory peaks are read. 0: none.
  int64_t unit_timing_iters = 0;
  // After the unit-timing pass (of an ok run), this many more iterations under the profiler, whose
  // operators the time account splits into categories (time_account_pass.hpp); 0: none.
  int64_t time_account_iters = 0;
  // The reference probe (reference_gemm.hpp): this many products before the warm-up starts and
  // as many after the measured window (of an ok run, before the passes above), outside both, and
  // one between measured iterations (within_window_stride) outside their clocks, so neither the
  // window nor its memory peaks see them. 0: none.
  int64_t reference_probe_repeats = 0;
  // Test hook (docs/time-account.md, "Validation"): the host sleeps this long at the start of
  // every iteration, in the timed loop and the time-account pass, as an input pipeline or a
  // logger between iterations would. 0 in every real run.
  double test_host_delay_seconds = 0;
  // --dump-memory-snapshot: the allocation history from the first measured iteration (as the
  // reference records it), written when the loop ends (an out-of-memory end too); empty: none.
  std::filesystem::path memory_snapshot_path;
};

// Decides, at every iteration start, whether the run stops. A single process stops when its
// own flag is set; ranks of a distributed run must agree (one stopping alone would leave the
// others waiting in a collective), so their step supplies a collective decision.
using StopDecision = std::function<bool(bool local_stop_requested)>;

// Drives `step` for options.max_iters iterations over batches from `data`. The memory
// counter is installed for the loop's duration with the step's resident bytes as baseline.
// `stop` is polled at every iteration start and, without a `decide_stop` (one process),
// also after every micro-batch but the last: a large GA then does not hold a stop request
// for a whole iteration; the unfinished iteration is neither stepped nor recorded. With a
// `decide_stop` (several ranks) the run stops only at iteration starts, where the ranks agree.
TrainResult run_timed_loop(TrainStep& step, TokenBatcher& data, const torch::Device& device,
                           const LoopOptions& options, const IterationCallback& on_iteration,
                           const std::atomic<bool>* stop, const StopDecision& decide_stop = {});

// The token batcher's options for a run: each rank draws its own stream (seed mixed with
// the rank), so one iteration of W ranks consumes W·GA distinct micro-batches.
TokenBatchOptions batch_options_for(const TrainOptions& options, int64_t vocab_size, int64_t rank = 0,
                                    int64_t world_size = 1);

// Checks options against the model and device before any work; throws std::invalid_argument
// whose message starts with the TrainOptions field (`seq_len`, `dtype`, `token_file`, ...),
// then the value and what is valid; the bench layer names the matching command-line option.
// run_training calls it too.
void validate_options(const TrainOptions& options, const model::Config& config, const torch::Device& device);

// Trains `model` (already on its device and dtype; moved/cast there if not). `stop` is
// polled at iteration starts and between micro-batches (run_timed_loop). Throws std::invalid_argument for invalid options (see
// validate_options); every failure after that is reported through TrainResult::status.
TrainResult run_training(model::GPT& model, const torch::Device& device, const TrainOptions& options,
                         const IterationCallback& on_iteration, const std::atomic<bool>* stop);

}  // namespace tokbench::train
