// The one translation unit of the bench layer that includes LibTorch: model construction,
// the training call, signal handling and the TrainResult -> MeasuredRun copy. Everything it
// prints or writes is formatted by the torch-free files beside it.
#include "run/run_benchmark.hpp"

#include <fcntl.h>
#include <torch/torch.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <functional>
#include <iostream>
#include <map>
#include <optional>
#include <string>

#include "process/signal_scope.hpp"
#include "machine/environment.hpp"
#include "run/metrics.hpp"
#include "run/progress.hpp"
#include "run/publish_result.hpp"
#include "run/rank_gathering.hpp"
#include "run/report.hpp"
#include "run/resolve.hpp"
#include "run/result_json.hpp"
#include "distributed/device_binding.hpp"
#include "distributed/parallel_step.hpp"
#include "distributed/rank_results.hpp"
#include "distributed/shared_gemm_choice.hpp"
#include "distributed/stop_agreement.hpp"
#include "model/gpt.hpp"
#include "parallel/strategy.hpp"
#include "train/caching_cpu_allocator.hpp"
#include "train/cuda_graph_step.hpp"
#include "train/dtype_mode.hpp"
#include "train/train_loop.hpp"

namespace tokbench::run {
namespace {

// Stop requests, caught by a process::SignalScope. The first SIGINT/SIGTERM sets its
// stop_requested flag; the train loop polls it between micro-batches (one process) or at
// iteration starts (ranks, which must agree), and the run reports what it measured and writes its
// JSON. A second one ends the process at once (a micro-batch, a collective or the set-up can take
// minutes), and still leaves a result: the scope's on_stop action writes a minimal JSON (status
// interrupted, message "stopped by a second signal") and _exit(5)s.
//
// Why the handler and not a watcher thread woken through a self-pipe: the JSON text is
// formatted before the handler is installed (FallbackResult), so writing it needs only
// open/write/fsync/close/rename/_exit, all async-signal-safe (POSIX.1-2008, 2.4.3), and
// lock-free atomics. Nothing else has to run: no second thread to be scheduled, no lock, no
// allocation, so it works whichever thread the signal lands on (LibTorch's pools included)
// and whatever lock that thread holds; a watcher thread would have to format or at least
// write from a process whose other threads may hold the allocator's or stdio's locks.
// The scope blocks SIGINT/SIGTERM inside its handler, so a third one cannot interleave.
std::atomic<bool> g_result_written{false};  // the real result is out: a late signal must not replace it
static_assert(std::atomic<bool>::is_always_lock_free, "the signal handler needs lock-free atomics");

// What the handler writes, prepared beforehand; plain pointers into strings that outlive the
// handler's installation (SignalGuard).
struct FallbackResult {
  const char* json_path = nullptr;  // nullptr: no file
  const char* temp_path = nullptr;  // beside json_path, renamed over it
  bool to_stdout = false;
  const char* text = nullptr;
  std::size_t text_size = 0;
  const char* line = nullptr;       // the closing stderr line
  std::size_t line_size = 0;
  int exit_code = 5;                // interrupted
};
FallbackResult g_fallback;

bool write_all(int fd, const char* data, std::size_t size) {
  while (size > 0) {
    const ssize_t n = ::write(fd, data, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

// The scope's on_stop action: the first request only sets the flag the loop polls.
void on_stop_signal(int count) {
  if (count == 1) return;
  const FallbackResult& f = g_fallback;
  if (!g_result_written.load() && f.text != nullptr) {
    if (f.json_path != nullptr) {
      const int fd = ::open(f.temp_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
      if (fd >= 0) {
        const bool ok = write_all(fd, f.text, f.text_size) && ::fsync(fd) == 0;
        if (::close(fd) == 0 && ok) ::rename(f.temp_path, f.json_path);
        else ::unlink(f.temp_path);
      }
    }
    if (f.to_stdout) write_all(STDOUT_FILENO, f.text, f.text_size);
  }
  if (f.line != nullptr) write_all(STDERR_FILENO, f.line, f.line_size);
  ::_exit(f.exit_code);
}

// The stop handling of one run: the fallback is published before the scope opens and withdrawn
// after it closes, so the handler never sees a half-written one.
class SignalGuard {
 public:
  explicit SignalGuard(const FallbackResult& fallback) {
    g_result_written.store(false);
    g_fallback = fallback;
    scope_.emplace(process::SignalScopeOptions{.on_stop = on_stop_signal});
  }
  ~SignalGuard() {
    scope_.reset();
    g_fallback = FallbackResult{};
  }
  SignalGuard(const SignalGuard&) = delete;
  SignalGuard& operator=(const SignalGuard&) = delete;

  const std::atomic<bool>& stop_requested() const { return scope_->stop_requested(); }

 private:
  std::optional<process::SignalScope> scope_;
};

std::string first_line(const std::string& text) { return text.substr(0, text.find('\n')); }

IterationSample sample_of(const train::IterationRecord& r) {
  return IterationSample{r.index, r.warmup, r.seconds, r.loss, r.end_time, r.real_tokens};
}

torch::Device device_of(const RunPlan& plan) {
  return plan.device_kind == DeviceKind::cuda
             ? torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(plan.device_index))
             : torch::Device(torch::kCPU);
}

// The fused executor's computation. With many ranks its kernel choice is rank 0's, measured
// there only.
std::shared_ptr<train::LossComputation> make_fused(const RunPlan& plan, const model::GPT& model,
                                                   const torch::Device& device,
                                                   const std::optional<distributed::ProcessGroups>& groups) {
  train::FusedComputationOptions o;
  o.dtype = plan.train.dtype;
  o.rows_per_micro_batch = plan.train.micro_batch * plan.train.seq_len;
  if (groups) {
    o.share_choice = [world = groups->world, rank = groups->rank,
                      device](const std::function<train::GemmChoices()>& measure) {
      return distributed::gemm_choice_of_rank0(*world, rank, device, measure);
    };
  }
  return train::make_fused_computation(model, device, o);
}

// How each of tokbench's own executors (executor_registry.hpp) computes the step, keyed by its
// id; an executor absent here runs every step's default computation, eager's.
using ComputationFactory = std::shared_ptr<train::LossComputation> (*)(
    const RunPlan&, const model::GPT&, const torch::Device&, const std::optional<distributed::ProcessGroups>&);
const std::map<Executor, ComputationFactory> kComputations = {
    {Executor::fused, make_fused},
};

// The executor as a loss computation; null for eager (every step's default).
std::shared_ptr<train::LossComputation> make_computation(const RunPlan& plan, const model::GPT& model,
                                                         const torch::Device& device,
                                                         const std::optional<distributed::ProcessGroups>& groups) {
  const auto it = kComputations.find(plan.compiler.executor);
  return it == kComputations.end() ? nullptr : it->second(plan, model, device, groups);
}

std::unique_ptr<train::TrainStep> make_step(const RunPlan& plan, model::GPT model, const torch::Device& device,
                                            const std::optional<distributed::ProcessGroups>& groups) {
  const train::TrainOptions& t = plan.train;
  auto computation = make_computation(plan, model, device, groups);
  // By the mode's layout, not its word: a new mode over DDP's buckets or FSDP's units (its entry
  // in parallel/strategy.cpp) takes the step of its layout with no case here.
  switch (parallel::mode_entry(plan.dist.mode).layout) {
    case parallel::LayoutKind::none: {
      auto step = train::make_eager_step(std::move(model), device,
                                         train::EagerStepOptions{t.dtype, t.adamw, t.zero_grad, std::move(computation)});
      // --cuda-graphs (resolved in cuda_graph_choice.cpp; a build without the CUDA unit falls
      // back in run_benchmark below): the step captured once and replayed.
      if (!plan.cuda_graphs.on || !train::cuda_graphs_built()) return step;
      return train::make_cuda_graph_step(
          std::move(step), device,
          train::CudaGraphStepOptions{.eager_warmups = kCudaGraphEagerWarmups, .fall_back = plan.cuda_graphs.mode != "on"});
    }
    case parallel::LayoutKind::ddp_buckets: {
      distributed::DdpOptions o;
      o.dtype = t.dtype;
      o.adamw = t.adamw;
      o.zero_grad = t.zero_grad;
      o.computation = std::move(computation);
      o.bucket_bytes = plan.dist.ddp_bucket_bytes;
      o.overlap = plan.dist.ddp_overlap;
      o.skip_sync_until_last_micro = plan.dist.skip_sync_until_last_micro;
      return distributed::make_ddp_step(std::move(model), device, *groups, o);
    }
    case parallel::LayoutKind::fsdp_units: {
      distributed::FsdpOptions o;
      o.dtype = t.dtype;
      o.adamw = t.adamw;
      o.zero_grad = t.zero_grad;
      o.shard_mode = plan.dist.shard_mode;
      o.units = plan.dist.units;
      o.min_unit_params = plan.dist.min_unit_params;
      o.computation = std::move(computation);
      o.init_seed = plan.train.seed;
      return distributed::make_fsdp_step(std::move(model), device, *groups, o);
    }
    case parallel::LayoutKind::fully_shard:  // resolve refuses it for tokbench's executors
      break;
  }
  throw std::logic_error("a distributed mode without a layout tokbench's steps build");
}

}  // namespace

int run_benchmark(const RunPlan& plan) {
  // The train layer's own checks (dtype on this device, data file against the vocabulary)
  // are usage errors too: std::invalid_argument reaches main() as exit code 2, before any work.
  const torch::Device device = device_of(plan);
  const train::TrainOptions& train_options = plan.train;
  try {
    train::validate_options(train_options, plan.config, device);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(with_option_names(e.what()));
  }
  // Capture needs this build's CUDA unit: `on` is refused before any work, `auto` falls back.
  if (plan.cuda_graphs.on && !train::cuda_graphs_built() && plan.cuda_graphs.mode == "on")
    throw std::invalid_argument("--cuda-graphs on: this tokbench was built without its CUDA unit (no nvcc); valid: "
                                "--cuda-graphs auto (falls back to eager) or off");

  // With the JSON on stdout, everything for people goes to stderr.
  std::ostream& report_out = plan.json_to_stdout ? std::cerr : std::cout;
  std::FILE* line_stream = plan.json_to_stdout ? stderr : stdout;
  const bool quiet = plan.options.quiet || plan.dist.env.rank != 0;
  if (machine::is_debug_build() && plan.dist.env.rank == 0)
    std::cerr << "#\n# WARNING: this tokbench is a DEBUG build (assertions on, no optimisation): "
                 "its figures are not representative. Rebuild with CMAKE_BUILD_TYPE=Release.\n#\n";
  const machine::Environment env = machine::capture_environment();
  const bool multi_rank = plan.dist.multi_rank();
  const bool lead = plan.dist.env.rank == 0;  // only rank 0 reports and writes the JSON
  const MetricInputs inputs = metric_inputs(plan);

  // What a second stop signal leaves behind (see on_stop_signal), formatted now. Its
  // strings live until the guard is gone.
  std::string fallback_text, fallback_temp;
  const std::string fallback_line = "tokbench: run ended with status interrupted: stopped by a second signal\n";
  const std::string json_path = plan.json_path.string();
  FallbackResult fallback;
  fallback.line = fallback_line.c_str();
  fallback.line_size = fallback_line.size();
  fallback.exit_code = exit_code(Outcome::interrupted);
  if (lead && (!plan.json_path.empty() || plan.json_to_stdout)) {
    MeasuredRun stopped;
    stopped.outcome = Outcome::interrupted;
    stopped.message = "stopped by a second signal";
    fallback_text = build_result_json(plan, stopped, compute_metrics(inputs, stopped), env).dump(4) + "\n";
    fallback.text = fallback_text.c_str();
    fallback.text_size = fallback_text.size();
    fallback.to_stdout = plan.json_to_stdout;
    if (!plan.json_path.empty()) {
      const std::filesystem::path dir =
          plan.json_path.has_parent_path() ? plan.json_path.parent_path() : std::filesystem::path(".");
      fallback_temp = (dir / ("." + plan.json_path.filename().string() + ".interrupted." +
                              std::to_string(::getpid()))).string();
      fallback.json_path = json_path.c_str();
      fallback.temp_path = fallback_temp.c_str();
    }
  }
  // Installed before the first line is printed (a test waits for the config echo), held
  // until the result is written: a first SIGINT/SIGTERM during the set-up, the ranks'
  // exchange or the JSON write must not lose the result.
  SignalGuard signals(fallback);

  // Before any device work: this thread (and so the step, the model, the allocations that
  // follow the current device) is on the plan's device, cuda:LOCAL_RANK for a rank.
  distributed::bind_rank_device(device);
  if (plan.train.num_threads > 0) torch::set_num_threads(plan.train.num_threads);
  // --cpu-allocator caching: every CPU tensor of the run (the model's parameters included,
  // whatever the executor) comes from the caching allocator, installed before the model.
  std::optional<train::ScopedCachingCpuAllocator> caching_allocator;
  if (plan.cpu_allocator == "caching") caching_allocator.emplace();
  if (!quiet) {
    print_config_echo(plan, report_out);
    report_out << "# threads: " << torch::get_num_threads() << "\n" << std::flush;
  }

  MeasuredRun run;
  if (plan.cuda_graphs.on && !train::cuda_graphs_built())
    run.cuda_graph_fallback = "off (auto): this tokbench was built without its CUDA unit (no nvcc)";
  std::string profile_message;  // --profile: the trace's path, or why none was written
  std::string snapshot_message;  // --dump-memory-snapshot: where it went, or why none was written
  std::string unit_timing_message;  // why an ok run has no unit_timings ("" when it has them)
  ProgressPrinter progress(ProgressOptions{plan.train.max_iters, plan.train.warmup_iters, plan.options.log_every, quiet || !lead,
                                           static_cast<bool>(::isatty(STDERR_FILENO))},
                           stderr, line_stream);
  std::optional<distributed::ProcessGroups> groups;
  const auto timeout = std::chrono::milliseconds(static_cast<int64_t>(plan.dist.timeout_seconds * 1000));
  {
    try {
      if (plan.device_kind == DeviceKind::cuda) {
        at::globalContext().setAllowTF32CuBLAS(plan.tf32);
        at::globalContext().setAllowTF32CuDNN(plan.tf32);
      }
      // --use-sdpa: the reference's sdpa_kernel([CUDNN, FLASH, EFFICIENT, MATH], set_priority=True).
      // The order is process-wide, and this process runs one benchmark.
      if (plan.options.use_sdpa) {
        using B = at::SDPBackend;
        at::globalContext().setSDPPriorityOrder(
            {static_cast<int64_t>(B::cudnn_attention), static_cast<int64_t>(B::flash_attention),
             static_cast<int64_t>(B::efficient_attention), static_cast<int64_t>(B::math),
             static_cast<int64_t>(B::overrideable)});
      }
      if (multi_rank)
        groups = distributed::create_process_groups(
            distributed::GroupOptions{plan.dist.env, timeout, device, plan.dist.backend,
                               distributed::is_sharded(plan.dist.mode) ? plan.dist.shard_group_size : std::nullopt});
      // FSDP builds the model without storage and keeps only what each rank's sharding holds,
      // drawn from the seed (the same weights as one process's); the others build it whole.
      const bool shard_from_seed = plan.dist.mode == distributed::DistMode::fsdp;
      model::GPT gpt(plan.config, torch::TensorOptions().device(device).dtype(train::param_dtype(plan.train.dtype)),
                     shard_from_seed ? model::GPTImpl::ParameterStorage::deferred
                                     : model::GPTImpl::ParameterStorage::allocated);
      if (!shard_from_seed) gpt->reset_parameters(plan.train.seed);
      // Per block, in every executor and step: the steps' hooks see the recomputation's
      // gradients as any others (ZeRO-3 gathers a unit again before its block recomputes).
      gpt->set_activation_checkpointing(plan.checkpoint_activations);
      torch::AutoGradMode grad_mode(true);
      auto step = make_step(plan, gpt, device, groups);
      run.kernel_note = step->kernel_note();
      train::TokenBatcher data(train::batch_options_for(train_options, plan.config.vocab(), plan.dist.env.rank,
                                                         plan.world_size()),
                               device);
      std::optional<distributed::StopAgreement> agreement;
      train::StopDecision decide_stop;
      if (multi_rank) {
        agreement.emplace(groups->world, device);
        decide_stop = [&agreement](bool local) { return (*agreement)(local); };
      }
      // The reference probe (train/reference_gemm.hpp): a host GEMM, so the CPU's moment; on one
      // rank alone, whose GEMM is the comm document's `alone` (ranks beside it would slow it).
      const bool probe_beside_window = plan.device_kind != DeviceKind::cuda && !multi_rank;
      run.reference_probe_why =
          probe_beside_window ? "" : plan.device_kind == DeviceKind::cuda
              ? "a CUDA run: the probe times a host GEMM, which says nothing of the device's speed"
              : "a run of several ranks: the probe times one rank alone, as the one-rank run that feeds a prediction";
      const train::LoopOptions loop{.grad_accum = plan.train.grad_accum,
                                    .max_iters = plan.train.max_iters,
                                    .warmup_iters = plan.train.warmup_iters,
                                    .cpu_memory_cap_bytes = plan.train.cpu_memory_cap_bytes,
                                    .profile_path = plan.profile_path,
                                    .profile_iters = plan.profile_iters,
                                    .unit_timing_iters = plan.unit_timing_iters,
                                    .time_account_iters = plan.time_account_iters,
                                    .reference_probe_repeats = probe_beside_window ? train::kReferenceProbeRepeats : 0,
                                    .test_host_delay_seconds = plan.test_host_delay_seconds,
                                    .memory_snapshot_path = plan.memory_snapshot_path};
      const train::TrainResult result = train::run_timed_loop(
          *step, data, device, loop,
          [&progress](const train::IterationRecord& record) { progress.on_iteration(sample_of(record)); },
          &signals.stop_requested(), decide_stop);
      run.outcome = result.status;
      run.message = first_line(result.message);
      for (const auto& record : result.iterations) {
        run.iterations.push_back(sample_of(record));
        if (!record.warmup) run.exposed_comm_seconds += record.exposed_comm_seconds;
      }
      run.measured_window_seconds = result.measured_window_seconds;
      run.allocated_peak_bytes = result.memory.allocated_bytes;
      run.reserved_peak_bytes = result.memory.reserved_bytes;
      run.peak_rss_bytes = result.memory.peak_rss_bytes;
      run.memory_breakdown = result.memory_breakdown;
      run.overhead_seconds = result.overhead_seconds;
      run.attention_kernel = gpt->attention_kernels();
      if (!result.graph_fallback.empty()) run.cuda_graph_fallback = result.graph_fallback;
      profile_message = result.profile_message;
      snapshot_message = result.memory_snapshot_message;
      if (result.memory_snapshot_failed) note_snapshot_failure(run, snapshot_message);
      run.unit_timings = result.unit_timings;
      run.reference_probe = result.reference_probe;
      if (probe_beside_window && !run.reference_probe) run.reference_probe_why = "the probe's product failed (memory)";
      unit_timing_message = result.unit_timing_message;
      run.time_account = result.time_account;
      run.time_account_message = result.time_account_message;
    } catch (const c10::OutOfMemoryError& e) {
      run.outcome = Outcome::oom;
      run.message = first_line(e.what());
    } catch (const c10::Error& e) {  // rendezvous or set-up collectives among them
      run.message = first_line(e.what_without_backtrace());
      run.outcome = train::status_of_failure(run.message);
    } catch (const std::exception& e) {
      run.message = first_line(e.what());
      run.outcome = train::status_of_failure(run.message);
    }
    progress.finish();
  }

  if (multi_rank && groups) {
    gather_rank_results(plan, run, [&](const distributed::RankRecord& mine, std::chrono::milliseconds wait) {
      return distributed::exchange_rank_records(*groups->store, mine, plan.world_size(), wait);
    });
  }
  if (!lead) return end_of_other_rank(plan, run);

  const BenchMetrics metrics = compute_metrics(inputs, run);
  const auto json = build_result_json(plan, run, metrics, env);
  const int code = publish_result(plan, run, json, report_out);
  print_after_report(plan, run, {profile_message, snapshot_message, unit_timing_message}, report_out);
  g_result_written.store(true);
  return code;
}

}  // namespace tokbench::run
