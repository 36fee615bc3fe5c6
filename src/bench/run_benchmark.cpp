// The one translation unit of the bench layer that includes LibTorch: model construction,
// the training call, signal handling and the TrainResult -> MeasuredRun copy. Everything it
// prints or writes is formatted by the torch-free files beside it.
#include "bench/run_benchmark.hpp"

#include <torch/torch.h>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstdio>
#include <iostream>

#include "bench/environment.hpp"
#include "bench/metrics.hpp"
#include "bench/progress.hpp"
#include "bench/report.hpp"
#include "bench/result_json.hpp"
#include "model/gpt.hpp"
#include "train/dtype_mode.hpp"
#include "train/train_loop.hpp"

namespace tokbench::bench {
namespace {

// Set by SIGINT/SIGTERM; the train loop polls it at iteration ends. A second signal gets the
// default action (the handler re-arms SIG_DFL), so a stuck run can still be killed.
std::atomic<bool> g_stop_requested{false};
static_assert(std::atomic<bool>::is_always_lock_free, "the signal handler needs a lock-free flag");

extern "C" void on_stop_signal(int signal_number) {
  g_stop_requested.store(true);
  std::signal(signal_number, SIG_DFL);
}

struct SignalGuard {
  struct sigaction old_int {}, old_term {};
  SignalGuard() {
    g_stop_requested.store(false);
    struct sigaction action {};
    action.sa_handler = on_stop_signal;
    sigemptyset(&action.sa_mask);
    sigaction(SIGINT, &action, &old_int);
    sigaction(SIGTERM, &action, &old_term);
  }
  ~SignalGuard() {
    sigaction(SIGINT, &old_int, nullptr);
    sigaction(SIGTERM, &old_term, nullptr);
  }
};

std::string first_line(const std::string& text) { return text.substr(0, text.find('\n')); }

IterationSample sample_of(const train::IterationRecord& r) {
  return IterationSample{r.index, r.warmup, r.seconds, r.loss, r.end_time};
}

train::TrainOptions train_options_of(const RunPlan& plan) {
  train::TrainOptions t;
  t.micro_batch = plan.micro_batch;
  t.seq_len = plan.seq_len;
  t.grad_accum = plan.grad_accum;
  t.max_iters = plan.max_iters;
  t.warmup_iters = plan.warmup_iters;
  t.seed = plan.options.seed;
  t.dtype = plan.dtype;
  t.adamw.lr = plan.options.lr;
  t.adamw.weight_decay = plan.options.weight_decay;
  t.adamw.beta1 = plan.options.beta1;
  t.adamw.beta2 = plan.options.beta2;
  t.data.token_file = plan.token_file;
  t.data.token_bytes = plan.token_bytes;
  t.cpu_memory_cap_bytes = plan.cpu_memory_cap_bytes;
  t.num_threads = plan.options.num_threads;
  return t;
}

torch::Device device_of(const RunPlan& plan) {
  return plan.device_kind == DeviceKind::cuda
             ? torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(plan.device_index))
             : torch::Device(torch::kCPU);
}

}  // namespace

int run_benchmark(const RunPlan& plan) {
  // The train layer's own checks (dtype on this device, data file against the vocabulary)
  // are usage errors too: std::invalid_argument reaches main() as exit code 2, before any work.
  const torch::Device device = device_of(plan);
  const train::TrainOptions train_options = train_options_of(plan);
  train::validate_options(train_options, plan.config, device);

  // With the JSON on stdout, everything for people goes to stderr.
  std::ostream& report_out = plan.json_to_stdout ? std::cerr : std::cout;
  std::FILE* line_stream = plan.json_to_stdout ? stderr : stdout;
  const bool quiet = plan.options.quiet;
  if (is_debug_build())
    std::cerr << "#\n# WARNING: this tokbench is a DEBUG build (assertions on, no optimisation): "
                 "its figures are not representative. Rebuild with CMAKE_BUILD_TYPE=Release.\n#\n";
  if (plan.options.num_threads > 0) torch::set_num_threads(plan.options.num_threads);
  if (!quiet) {
    print_config_echo(plan, report_out);
    report_out << "# threads: " << torch::get_num_threads() << "\n" << std::flush;
  }
  const Environment env = capture_environment();

  MeasuredRun run;
  ProgressPrinter progress(ProgressOptions{plan.max_iters, plan.warmup_iters, plan.options.log_every, quiet,
                                           static_cast<bool>(::isatty(STDERR_FILENO))},
                           stderr, line_stream);
  {
    SignalGuard signals;
    try {
      if (plan.device_kind == DeviceKind::cuda) {
        at::globalContext().setAllowTF32CuBLAS(plan.tf32);
        at::globalContext().setAllowTF32CuDNN(plan.tf32);
      }
      model::GPT gpt(plan.config, torch::TensorOptions().device(device).dtype(train::param_dtype(plan.dtype)));
      gpt->reset_parameters(plan.options.seed);
      const train::TrainResult result = train::run_training(
          gpt, device, train_options,
          [&progress](const train::IterationRecord& record) { progress.on_iteration(sample_of(record)); },
          &g_stop_requested);
      run.outcome = result.status;
      run.message = first_line(result.message);
      for (const auto& record : result.iterations) run.iterations.push_back(sample_of(record));
      run.measured_window_seconds = result.measured_window_seconds;
      run.allocated_peak_bytes = result.memory.allocated_bytes;
      run.reserved_peak_bytes = result.memory.reserved_bytes;
      run.peak_rss_bytes = result.memory.peak_rss_bytes;
      run.overhead_seconds = result.overhead_seconds;
    } catch (const c10::OutOfMemoryError& e) {
      run.outcome = Outcome::oom;
      run.message = first_line(e.what());
    } catch (const std::exception& e) {
      run.outcome = Outcome::error;
      run.message = first_line(e.what());
    }
    progress.finish();
  }

  const MetricInputs inputs{plan.world_size,    plan.micro_batch,  plan.grad_accum,
                            plan.seq_len,       plan.warmup_iters, plan.flops_per_microbatch,
                            plan.peak ? std::optional<double>(plan.peak->flops_per_s) : std::nullopt};
  const BenchMetrics metrics = compute_metrics(inputs, run);
  print_report(plan, run, metrics, report_out);
  report_out << std::flush;

  const auto json = build_result_json(plan, run, metrics, env);
  int code = exit_code(run.outcome);
  if (!plan.json_path.empty()) {
    try {
      write_json_atomically(plan.json_path, json);
    } catch (const std::exception& e) {
      std::cerr << "tokbench: error: " << e.what() << "\n";
      if (code == 0) code = exit_code(Outcome::error);
    }
  }
  if (plan.json_to_stdout) std::cout << json.dump(4) << "\n" << std::flush;
  if (run.outcome != Outcome::ok)
    std::cerr << "tokbench: run ended with status " << to_string(run.outcome)
              << (run.message.empty() ? "" : ": " + run.message) << "\n";
  return code;
}

}  // namespace tokbench::bench
