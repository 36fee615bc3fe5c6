// The timed training loop (train_loop.hpp). Timeline: iteration i runs from the end of
// iteration i-1 (or the loop start) to the end of its own device synchronisation, so the
// per-iteration times tile the measured window exactly and the callback of iteration i is
// paid inside iteration i+1, as the reference's print and Throughput.update are.
#include "train/train_loop.hpp"

#include <ATen/Parallel.h>
#include <ATen/autocast_mode.h>
#include <torch/cuda.h>

#include <chrono>
#include <cmath>
#include <stdexcept>
#include <unordered_set>

#include "train/cuda_support.hpp"
#include "train/token_data.hpp"

namespace tokbench::train {

const char* to_string(RunStatus status) {
  switch (status) {
    case RunStatus::ok: return "ok";
    case RunStatus::oom: return "oom";
    case RunStatus::nan: return "nan";
    case RunStatus::interrupted: return "interrupted";
    case RunStatus::error: return "error";
  }
  return "unknown";
}

namespace {

using Clock = std::chrono::steady_clock;

double seconds_between(Clock::time_point from, Clock::time_point to) {
  return std::chrono::duration<double>(to - from).count();
}

// C++ twin of `with torch.autocast(device_type, dtype=torch.bfloat16)`: the cast cache is
// cleared when the outermost region exits, or stale bf16 copies of updated weights would
// be reused by the next forward.
class AutocastRegion {
 public:
  AutocastRegion(c10::DeviceType device_type, bool enabled) : device_type_(device_type), enabled_(enabled) {
    if (!enabled_) return;
    previous_enabled_ = at::autocast::is_autocast_enabled(device_type_);
    previous_dtype_ = at::autocast::get_autocast_dtype(device_type_);
    at::autocast::set_autocast_enabled(device_type_, true);
    at::autocast::set_autocast_dtype(device_type_, at::kBFloat16);
    at::autocast::increment_nesting();
  }
  ~AutocastRegion() {
    if (!enabled_) return;
    if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
    at::autocast::set_autocast_enabled(device_type_, previous_enabled_);
    at::autocast::set_autocast_dtype(device_type_, previous_dtype_);
  }
  AutocastRegion(const AutocastRegion&) = delete;
  AutocastRegion& operator=(const AutocastRegion&) = delete;

 private:
  c10::DeviceType device_type_;
  bool enabled_;
  bool previous_enabled_ = false;
  at::ScalarType previous_dtype_ = at::kBFloat16;
};

void synchronize(const torch::Device& device) {
  // CPU kernels have finished when they return; CUDA work is queued on the stream.
  if (device.is_cuda()) torch::cuda::synchronize(device.has_index() ? device.index() : -1);
}

// Bytes of the model's parameters, their gradients (if a caller kept any) and buffers, each
// storage once: held before the CPU counter is installed, so added to it as a baseline.
int64_t module_tensor_bytes(torch::nn::Module& module) {
  std::unordered_set<const void*> seen;
  int64_t bytes = 0;
  auto add = [&](const torch::Tensor& t) {
    if (!t.defined() || !t.has_storage()) return;
    if (seen.insert(t.storage().data()).second) bytes += static_cast<int64_t>(t.storage().nbytes());
  };
  for (const auto& p : module.parameters()) {
    add(p);
    add(p.grad());
  }
  for (const auto& b : module.buffers()) add(b);
  return bytes;
}

std::string option_error(const std::string& option, const std::string& value, const std::string& valid) {
  return option + ": invalid value '" + value + "'; " + valid;
}

}  // namespace

void validate_options(const TrainOptions& o, const model::Config& config, const torch::Device& device) {
  if (o.micro_batch < 1) {
    throw std::invalid_argument(option_error("--micro-batch-size", std::to_string(o.micro_batch), "must be >= 1"));
  }
  if (o.seq_len < 1 || o.seq_len > config.block_size) {
    throw std::invalid_argument(option_error("--seq-len", std::to_string(o.seq_len),
                                             "valid: 1.." + std::to_string(config.block_size) +
                                                 " (the model's block_size)"));
  }
  if (o.grad_accum < 1) {
    throw std::invalid_argument(option_error("--global-batch-size", "GA=" + std::to_string(o.grad_accum),
                                             "gradient accumulation steps must be >= 1"));
  }
  if (o.max_iters < 1) {
    throw std::invalid_argument(option_error("--max-iters", std::to_string(o.max_iters), "must be >= 1"));
  }
  if (o.warmup_iters < 0 || o.warmup_iters >= o.max_iters) {
    throw std::invalid_argument(option_error("--warmup-iters", std::to_string(o.warmup_iters),
                                             "valid: 0.." + std::to_string(o.max_iters - 1) +
                                                 " (fewer than --max-iters)"));
  }
  if (o.num_threads < 0) {
    throw std::invalid_argument(option_error("--num-threads", std::to_string(o.num_threads),
                                             "must be >= 0 (0: LibTorch's default)"));
  }
  if (o.cpu_memory_cap_bytes && *o.cpu_memory_cap_bytes < 0) {
    throw std::invalid_argument(option_error("cpu_memory_cap_bytes", std::to_string(*o.cpu_memory_cap_bytes),
                                             "must be >= 0"));
  }
  std::string why;
  if (!dtype_supported(o.dtype, device, &why)) {
    throw std::invalid_argument(option_error("--dtype", std::string(to_string(o.dtype)), why));
  }
  if (!o.data.token_file.empty()) {
    TokenFile check(o.data.token_file, o.data.token_bytes, o.seq_len + 1);  // throws naming --data
  }
}

TrainResult run_training(model::GPT& model, const torch::Device& device, const TrainOptions& options,
                         const IterationCallback& on_iteration, const std::atomic<bool>* stop) {
  validate_options(options, model->config(), device);
  if (options.num_threads > 0) at::set_num_threads(options.num_threads);
  torch::AutoGradMode grad_mode(true);

  model->to(device, param_dtype(options.dtype));
  model->train();
  RunMemoryTracker memory(device, options.cpu_memory_cap_bytes, module_tensor_bytes(*model));

  TokenBatchOptions batch_options;
  batch_options.micro_batch = options.micro_batch;
  batch_options.seq_len = options.seq_len;
  batch_options.seed = options.seed;
  batch_options.token_file = options.data.token_file;
  batch_options.token_bytes = options.data.token_bytes;
  batch_options.sequential = options.data.sequential;
  batch_options.vocab_size = model->config().vocab();
  batch_options.host_buffers = options.grad_accum;

  TrainResult result;
  result.iterations.reserve(static_cast<std::size_t>(options.max_iters));
  const bool autocast = options.dtype == model::TrainPrecision::bf16_mixed;
  const int64_t vocab = model->config().vocab();
  const auto ga = static_cast<double>(options.grad_accum);
  try {
    TokenBatcher data(batch_options, device);
    AdamW optimizer(model->parameters(), options.adamw, device);
    result.fused_adamw = optimizer.fused();
    try {
      const Clock::time_point loop_start = Clock::now();
      Clock::time_point previous_end = loop_start;
      Clock::time_point window_start = loop_start;
      Clock::time_point window_end = loop_start;
      for (int64_t i = 0; i < options.max_iters; ++i) {
        if (stop != nullptr && stop->load(std::memory_order_relaxed)) {
          result.status = RunStatus::interrupted;
          result.message = "stopped on request after " + std::to_string(i) + " iterations";
          break;
        }
        double compute_seconds = 0;  // forward, backward, optimizer and the final sync
        torch::Tensor last_loss;
        for (int64_t micro = 0; micro < options.grad_accum; ++micro) {
          const TokenBatch batch = data.next();
          const Clock::time_point start = Clock::now();
          {  // the logits (B·T·V floats) are freed inside the timed span: part of the step
            torch::Tensor logits;
            {
              AutocastRegion region(device.type(), autocast);
              logits = model->forward(batch.x);  // (B, T, V)
            }
            // Lightning's bf16-mixed returns outputs in fp32, so the loss is taken in fp32.
            if (autocast) logits = logits.to(torch::kFloat);
            // The reference: cross_entropy(logits.reshape(-1, V), y.reshape(-1), ignore_index=-1).
            torch::Tensor loss = at::cross_entropy_loss(logits.reshape({-1, vocab}), batch.y.reshape({-1}), {},
                                                        at::Reduction::Mean, /*ignore_index=*/-1);
            (loss / ga).backward();
            last_loss = loss.detach();
          }
          compute_seconds += seconds_between(start, Clock::now());
        }
        const Clock::time_point step_start = Clock::now();
        optimizer.step();
        optimizer.zero_grad();
        synchronize(device);
        const Clock::time_point end = Clock::now();
        compute_seconds += seconds_between(step_start, end);

        IterationRecord record;
        record.index = i;
        record.warmup = i < options.warmup_iters;
        record.seconds = seconds_between(previous_end, end);
        record.loss = last_loss.item<double>();  // already synchronised: a plain read
        record.end_time = seconds_between(loop_start, end);
        record.overhead_seconds = std::max(0.0, record.seconds - compute_seconds);
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
      }
      if (result.measured_iters == 0) result.measured_window_seconds = 0;
    } catch (...) {
      result.optimizer_steps = optimizer.steps_taken();  // no device reads after a failure
      throw;
    }
    result.optimizer_steps = optimizer.state_step();
  } catch (const c10::OutOfMemoryError& e) {
    result.status = RunStatus::oom;
    result.message = e.what_without_backtrace();
  } catch (const c10::Error& e) {
    result.status = RunStatus::error;
    result.message = e.what_without_backtrace();
  } catch (const std::exception& e) {
    result.status = RunStatus::error;
    result.message = e.what();
  }
  if (result.status == RunStatus::oom) {
    // Free what this run still holds beyond the model itself: gradients and cached blocks.
    for (auto& p : model->parameters()) p.mutable_grad().reset();
    if (device.is_cuda()) cuda_support::empty_cache();
  }
  result.memory = memory.peaks();
  return result;
}

}  // namespace tokbench::train
