// The timed training loop (train_loop.hpp). Timeline: iteration i runs from the end of
// iteration i-1 (or the loop start) to the end of its own device synchronisation, so the
// per-iteration times tile the measured window exactly and the callback of iteration i is
// paid inside iteration i+1, as the reference's print and Throughput.update are.
#include "train/train_loop.hpp"

#include <ATen/Parallel.h>
#include <torch/cuda.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <stdexcept>
#include <thread>

#include "config/row_record_keys.hpp"
#include "train/cuda_support.hpp"
#include "train/profile_trace.hpp"
#include "train/run_plan_keys.hpp"
#include "train/token_data.hpp"
#include "train/unit_timing_pass.hpp"

namespace tokbench::train {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_between(Clock::time_point from, Clock::time_point to) {
  return std::chrono::duration<double>(to - from).count();
}

void synchronize(const torch::Device& device) {
  // CPU kernels have finished when they return; CUDA work is queued on the stream.
  if (device.is_cuda()) torch::cuda::synchronize(device.has_index() ? device.index() : -1);
}

std::string option_error(const std::string& option, const std::string& value, const std::string& valid) {
  return option + ": invalid value '" + value + "'; " + valid;
}

// --profile: `iterations` more iterations of `step` under the profiler, after the measured
// window, untimed and unrecorded. Returns what became of the trace, in one line.
std::string record_profile(TrainStep& step, TokenBatcher& data, const torch::Device& device, int64_t grad_accum,
                           int64_t iterations, const std::filesystem::path& path) {
  try {
    synchronize(device);
    ProfileTrace trace(device);
    for (int64_t i = 0; i < iterations; ++i) {
      torch::Tensor loss;
      for (int64_t micro = 0; micro < grad_accum; ++micro) loss = step.forward_backward(data.next(), micro, grad_accum);
      {
        TraceRange range(account::ranges::kOptimizer);
        step.optimizer_step(loss);
      }
      synchronize(device);
    }
    trace.save(path);
  } catch (const c10::Error& e) {
    return "no profile written: " + std::string(e.what_without_backtrace()).substr(0, 300);
  } catch (const std::exception& e) {
    return std::string("no profile written: ") + e.what();
  }
  return "profile: Chrome trace of " + std::to_string(iterations) +
         " iterations after the measured window (not in the metrics) written to " + path.string();
}

// Runs a pass after the measured window (the unit timings, the time account) whose failure is
// not the run's: the run's figures are already measured, so the record only lacks the pass's
// result. Returns "" when the pass ran, else the line saying why `what` is missing; after an
// out-of-memory end the step's memory is released, as the window's own end does.
std::string after_window_pass(const char* what, TrainStep& step, const torch::Device& device,
                              const std::function<bool()>& pass) {
  const std::string missing = std::string("no ") + what + ": ";
  try {
    return pass() ? std::string() : missing + "stopped on request during its pass";
  } catch (const c10::OutOfMemoryError& e) {
    step.release_after_failure();
    if (device.is_cuda()) cuda_support::empty_cache();
    return missing + std::string(e.what_without_backtrace()).substr(0, 300);
  } catch (const c10::Error& e) {
    return missing + std::string(e.what_without_backtrace()).substr(0, 300);
  } catch (const std::exception& e) {
    return missing + e.what();
  }
}

// The per-unit timing pass (unit_timing_pass.hpp).
void record_unit_timings(TrainStep& step, TokenBatcher& data, const torch::Device& device, int64_t grad_accum,
                         int64_t iterations, const std::function<bool()>& stop, TrainResult& result) {
  result.unit_timing_message = after_window_pass("per-unit timings", step, device, [&] {
    result.unit_timings = measure_unit_timings(step.eager(), data, device, grad_accum, iterations, stop);
    return result.unit_timings.has_value();
  });
}

// The time account's profiled pass (time_account_pass.hpp).
void record_time_account(TrainStep& step, TokenBatcher& data, const torch::Device& device, const LoopOptions& options,
                         const std::function<bool()>& stop, TrainResult& result) {
  result.time_account_message = after_window_pass("time account", step, device, [&] {
    result.time_account = profile_time_account(step.eager(), data, device, options.grad_accum, options.time_account_iters,
                                               stop, options.test_host_delay_seconds);
    return result.time_account.has_value();
  });
}

}  // namespace

// A failed collective surfaces as an exception whose text says what the peer did: stopped
// answering (Gloo's and NCCL's timeouts) or went away (a closed or reset connection).
void validate_options(const TrainOptions& o, const model::Config& config, const torch::Device& device) {
  // Each refusal starts with the field's name: its key in the run plan's train section (these
  // fields), num_threads by its option's record key; run's with_option_names makes it the option.
  if (o.micro_batch < 1) {
    throw std::invalid_argument(option_error(run_plan_key::micro_batch, std::to_string(o.micro_batch), "must be >= 1"));
  }
  if (o.seq_len < 1 || o.seq_len > config.block_size) {
    throw std::invalid_argument(option_error(run_plan_key::seq_len, std::to_string(o.seq_len),
                                             "valid: 1.." + std::to_string(config.block_size) +
                                                 " (the model's block_size)"));
  }
  if (o.grad_accum < 1) {
    throw std::invalid_argument(option_error(run_plan_key::grad_accum, std::to_string(o.grad_accum),
                                             "must be >= 1"));
  }
  if (o.max_iters < 1) {
    throw std::invalid_argument(option_error(run_plan_key::max_iters, std::to_string(o.max_iters), "must be >= 1"));
  }
  if (o.warmup_iters < 0 || o.warmup_iters >= o.max_iters) {
    throw std::invalid_argument(option_error(run_plan_key::warmup_iters, std::to_string(o.warmup_iters),
                                             "valid: 0.." + std::to_string(o.max_iters - 1) +
                                                 " (fewer than " + std::string(run_plan_key::max_iters) + ")"));
  }
  if (o.num_threads < 0) {
    throw std::invalid_argument(option_error(config::config_key::num_threads, std::to_string(o.num_threads),
                                             "must be >= 0 (0: LibTorch's default)"));
  }
  if (o.cpu_memory_cap_bytes && *o.cpu_memory_cap_bytes < 0) {
    throw std::invalid_argument(option_error("cpu_memory_cap_bytes", std::to_string(*o.cpu_memory_cap_bytes),
                                             "must be >= 0"));
  }
  std::string why;
  if (!dtype_supported(o.dtype, device, &why)) {
    throw std::invalid_argument(option_error(run_plan_key::dtype, std::string(to_string(o.dtype)), why));
  }
  if (!o.data.token_file.empty()) {
    TokenFile check(o.data.token_file, o.data.token_bytes, o.seq_len + 1);  // throws naming token_file
  }
}

TokenBatchOptions batch_options_for(const TrainOptions& options, int64_t vocab_size, int64_t rank,
                                    int64_t world_size) {
  TokenBatchOptions b;
  b.micro_batch = options.micro_batch;
  b.seq_len = options.seq_len;
  // Rank 0 keeps the run's seed, so a one-rank run draws what a single process draws.
  const uint64_t data_seed = options.data.data_seed.value_or(options.seed);
  b.seed = rank == 0 ? data_seed : data_seed ^ (0x9E3779B97F4A7C15ull * static_cast<uint64_t>(rank));
  b.token_file = options.data.token_file;
  b.token_bytes = options.data.token_bytes;
  b.sequential = options.data.sequential;
  b.dynamic_lengths = options.data.dynamic_lengths;
  b.run_seed = data_seed;
  b.rank = rank;
  b.world_size = world_size;
  b.vocab_size = vocab_size;
  b.host_buffers = options.grad_accum;
  return b;
}

TrainResult run_timed_loop(TrainStep& step, TokenBatcher& data, const torch::Device& device,
                           const LoopOptions& options, const IterationCallback& on_iteration,
                           const std::atomic<bool>* stop, const StopDecision& decide_stop) {
  TrainResult result;
  // Reserved up to a bound: max_iters is the caller's, and a vector grows past it anyway.
  result.iterations.reserve(static_cast<std::size_t>(std::clamp<int64_t>(options.max_iters, 0, 1 << 16)));
  result.fused_adamw = step.fused_adamw();
  // The reference probe's first half: before the tracker counts, the step's set-up synchronised.
  // A probe that fails (memory) leaves no probe, never a failed run.
  if (options.reference_probe_repeats > 0) {
    try {
      synchronize(device);
      ReferenceProbeTimes probe;
      probe.threads = at::get_num_threads();
      probe.before_seconds = time_reference_gemm(static_cast<int>(options.reference_probe_repeats), probe.size);
      result.reference_probe = std::move(probe);
    } catch (const std::exception&) {
      result.reference_probe.reset();
    }
  }
  // The probe inside the window: one product held through the loop (its operands outside
  // LibTorch's allocator, so the memory figures below do not see them), timed between measured
  // iterations; the clocks the iterations are timed by skip its time.
  std::optional<ReferenceGemm> window_gemm;
  const int64_t window_stride = within_window_stride(options.max_iters - options.warmup_iters);
  if (result.reference_probe && window_stride > 0) {
    try {
      window_gemm.emplace(result.reference_probe->size);
    } catch (const std::exception&) {
      window_gemm.reset();
    }
  }
  RunMemoryTracker memory(device, options.cpu_memory_cap_bytes, step.resident_state_bytes());
  // Activations: what each forward left held for its backward (memory_breakdown.hpp).
  int64_t micro_start_bytes = 0;
  int64_t activation_bytes = 0;
  step.set_forward_end_callback(
      [&] { activation_bytes = std::max(activation_bytes, memory.current_bytes() - micro_start_bytes); });
  struct ForgetCallback {
    TrainStep& step;
    ~ForgetCallback() { step.set_forward_end_callback({}); }
  } forget_callback{step};
  auto stop_requested = [&] {
    const bool local = stop != nullptr && stop->load(std::memory_order_relaxed);
    return decide_stop ? decide_stop(local) : local;
  };
  // One process also stops between micro-batches, so an iteration of many (a large GA)
  // does not hold a stop request for minutes. Ranks of a distributed run stop only where
  // they agree (decide_stop, at iteration starts): one rank leaving mid-iteration would
  // leave the others waiting in the gradient collective.
  auto stop_between_micro_batches = [&] {
    return !decide_stop && stop != nullptr && stop->load(std::memory_order_relaxed);
  };
  try {
    try {
      // Set-up work still queued on the device is not charged to the first iteration.
      synchronize(device);
      Clock::time_point loop_start = Clock::now();
      Clock::time_point previous_end = loop_start;
      Clock::time_point window_start = loop_start;
      Clock::time_point window_end = loop_start;
      for (int64_t i = 0; i < options.max_iters; ++i) {
        // --dump-memory-snapshot: from the first measured iteration, as the reference records it.
        if (i == options.warmup_iters && !options.memory_snapshot_path.empty()) memory.start_history();
        if (stop_requested()) {
          result.status = RunStatus::interrupted;
          result.message = "stopped on request after " + std::to_string(i) + " iterations";
          break;
        }
        if (options.test_host_delay_seconds > 0)
          std::this_thread::sleep_for(std::chrono::duration<double>(options.test_host_delay_seconds));
        double compute_seconds = 0;  // forward, backward, optimizer and the final sync
        int64_t real_tokens = 0;     // this rank's targets that are not padding
        torch::Tensor last_loss;
        bool stopped_mid_iteration = false;
        for (int64_t micro = 0; micro < options.grad_accum; ++micro) {
          const TokenBatch batch = data.next();
          real_tokens += batch.real_tokens;
          micro_start_bytes = memory.current_bytes();
          const Clock::time_point start = Clock::now();
          last_loss = step.forward_backward(batch, micro, options.grad_accum);
          compute_seconds += seconds_between(start, Clock::now());
          if (micro + 1 < options.grad_accum && stop_between_micro_batches()) {
            // The unfinished iteration is neither stepped nor recorded.
            result.status = RunStatus::interrupted;
            result.message = "stopped on request after " + std::to_string(i) + " iterations, " +
                             std::to_string(micro + 1) + " of " + std::to_string(options.grad_accum) +
                             " micro-batches into the next (not counted)";
            stopped_mid_iteration = true;
            break;
          }
        }
        if (stopped_mid_iteration) break;
        const Clock::time_point step_start = Clock::now();
        torch::Tensor reported_loss;
        {
          TraceRange range(account::ranges::kOptimizer);
          reported_loss = step.optimizer_step(last_loss);
        }
        synchronize(device);
        const Clock::time_point end = Clock::now();
        compute_seconds += seconds_between(step_start, end);

        IterationRecord record;
        record.index = i;
        record.warmup = i < options.warmup_iters;
        record.seconds = seconds_between(previous_end, end);
        record.loss = reported_loss.item<double>();  // already synchronised: a plain read
        record.end_time = seconds_between(loop_start, end);
        record.overhead_seconds = std::max(0.0, record.seconds - compute_seconds);
        record.exposed_comm_seconds = step.take_exposed_comm_seconds();
        record.real_tokens = real_tokens;
        previous_end = end;
        if (record.warmup) {
          window_start = end;
        } else {
          window_end = end;
          ++result.measured_iters;
          result.overhead_seconds += record.overhead_seconds;
        }
        result.measured_window_seconds = seconds_between(window_start, window_end);
        result.iterations.push_back(record);
        const bool finite = std::isfinite(record.loss);
        if (!finite) {
          result.status = RunStatus::nan;
          result.message = "loss is " + std::to_string(record.loss) + " at iteration " + std::to_string(i);
        }
        if (on_iteration) on_iteration(record);  // the NaN iteration too, so progress shows it
        if (!finite) break;
        const int64_t measured_index = i - options.warmup_iters;
        if (window_gemm && measured_index >= 0 && i + 1 < options.max_iters && measured_index % window_stride == 0) {
          const Clock::time_point probe_start = Clock::now();
          try {
            // One untimed product first: the iteration has pushed the operands out of the caches,
            // and the products each side of the window and comm's are timed warm.
            window_gemm->seconds();
            result.reference_probe->within_seconds.push_back(window_gemm->seconds());
          } catch (const std::exception&) {
            window_gemm.reset();  // a probe that fails ends the probe, never the run
          }
          // Every clock the loop times by moves past the product: the next iteration, the
          // window and the records' end times hold none of it.
          const Clock::duration probe_time = Clock::now() - probe_start;
          previous_end += probe_time;
          window_start += probe_time;
          loop_start += probe_time;
        }
      }
      if (result.measured_iters == 0) result.measured_window_seconds = 0;
    } catch (...) {
      result.optimizer_steps = step.optimizer_steps_taken();  // no device reads after a failure
      throw;
    }
    result.optimizer_steps = step.optimizer_state_step();
  } catch (const c10::OutOfMemoryError& e) {
    result.status = RunStatus::oom;
    result.message = e.what_without_backtrace();
  } catch (const c10::Error& e) {
    result.message = e.what_without_backtrace();
    result.status = status_of_failure(result.message);
  } catch (const std::exception& e) {
    result.message = e.what();
    result.status = status_of_failure(result.message);
  }
  // The history and what the loop holds at its end: for an out-of-memory end (what a snapshot
  // shows best), before the release below frees it.
  if (!options.memory_snapshot_path.empty()) {
    const RunMemoryTracker::SnapshotWrite snapshot = memory.write_snapshot(options.memory_snapshot_path);
    result.memory_snapshot_message = snapshot.message;
    result.memory_snapshot_failed = !snapshot.written;
  }
  if (result.status == RunStatus::oom) {
    // Free what this run still holds beyond the model itself: gradients and cached blocks.
    step.release_after_failure();
    if (device.is_cuda()) cuda_support::empty_cache();
  }
  result.graph_fallback = step.graph_fallback();
  result.memory = memory.peaks();  // before any profiled iterations: the run's own peaks
  result.memory_breakdown = step.memory_parts();
  result.memory_breakdown.activations = activation_bytes;
  result.memory_breakdown.allocator_reserve =
      std::max<int64_t>(0, result.memory.reserved_bytes - result.memory.allocated_bytes);
  // Its second half: after the window and its peaks, before the passes that follow it.
  if (result.reference_probe && result.status == RunStatus::ok) {
    try {
      result.reference_probe->after_seconds =
          time_reference_gemm(static_cast<int>(options.reference_probe_repeats), result.reference_probe->size);
    } catch (const std::exception&) {
      result.reference_probe->after_seconds.clear();
    }
  }
  // Every rank of an ok run runs the pass (its collectives keep them in step); a stop request
  // during it is decided as in the loop, at iteration starts. The passes run the step eagerly
  // (TrainStep::eager): a replayed CUDA graph runs neither their hooks nor their ranges.
  if (options.unit_timing_iters > 0 && result.status == RunStatus::ok)
    record_unit_timings(step, data, device, options.grad_accum, options.unit_timing_iters, stop_requested, result);
  if (options.time_account_iters > 0 && result.status == RunStatus::ok)
    record_time_account(step, data, device, options, stop_requested, result);
  if (!options.profile_path.empty()) {
    result.profile_message =
        result.status == RunStatus::ok
            ? record_profile(step.eager(), data, device, options.grad_accum, options.profile_iters, options.profile_path)
            : "no profile written: the run ended with status " + std::string(to_string(result.status));
  }
  return result;
}

TrainResult run_training(model::GPT& model, const torch::Device& device, const TrainOptions& options,
                         const IterationCallback& on_iteration, const std::atomic<bool>* stop) {
  validate_options(options, model->config(), device);
  if (options.num_threads > 0) at::set_num_threads(options.num_threads);
  torch::AutoGradMode grad_mode(true);
  TrainResult failed;
  try {
    TokenBatcher data(batch_options_for(options, model->config().vocab()), device);
    EagerStepOptions step_options;
    step_options.dtype = options.dtype;
    step_options.adamw = options.adamw;
    step_options.zero_grad = options.zero_grad;
    auto step = make_eager_step(model, device, step_options);
    LoopOptions loop;
    loop.grad_accum = options.grad_accum;
    loop.max_iters = options.max_iters;
    loop.warmup_iters = options.warmup_iters;
    loop.cpu_memory_cap_bytes = options.cpu_memory_cap_bytes;
    return run_timed_loop(*step, data, device, loop, on_iteration, stop);
  } catch (const c10::OutOfMemoryError& e) {  // while moving the model or filling buffers
    failed.status = RunStatus::oom;
    failed.message = e.what_without_backtrace();
  }
  return failed;
}

}  // namespace tokbench::train
