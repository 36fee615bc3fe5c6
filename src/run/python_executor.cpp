// python_executor.hpp. The child runs in its own process group so that a terminal's Ctrl-C
// reaches tokbench only, which forwards it once (the step stops after its micro-batch and
// reports); a second signal kills the child and tokbench reports what it had read. The
// child dies with tokbench if tokbench itself is killed (the step script sets its parent-death
// signal from TOKBENCH_PARENT_PID, process/child_process.hpp).
#include "run/python_executor.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <memory>
#include <optional>
#include <stdexcept>

#include "machine/environment.hpp"
#include "run/metrics.hpp"
#include "run/progress.hpp"
#include "run/publish_result.hpp"
#include "run/python_protocol_keys.hpp"
#include "run/python_time_account.hpp"
#include "run/rank_gathering.hpp"
#include "run/report.hpp"
#include "run/resolve.hpp"
#include "run/result_json.hpp"
#include "run/run_plan_json.hpp"
#include "train/run_plan_keys.hpp"
#include "process/child_process.hpp"
#include "process/signal_scope.hpp"

#ifndef TOKBENCH_SOURCE_DIR
#define TOKBENCH_SOURCE_DIR ""
#endif

namespace tokbench::run {
namespace {

namespace fs = std::filesystem;
namespace pe = python_protocol_event;
namespace pk = python_protocol_key;

constexpr const char* kScriptName = "tokbench_python_step.py";
constexpr const char* kMemoryProbeName = "libtokbench_memory_probe.so";
constexpr const char* kInstallHint =
    "install with `.venv/bin/pip install --no-deps -r scripts/reference/requirements.txt` (scripts/bootstrap does), "
    "or set TOKBENCH_PYTHON to an interpreter that has them";

bool is_executable_file(const fs::path& path) {
  std::error_code ec;
  return fs::is_regular_file(path, ec) && ::access(path.c_str(), X_OK) == 0;
}

std::optional<fs::path> own_directory() {
  char exe[4096] = {};
  const ssize_t n = ::readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n <= 0) return std::nullopt;
  return fs::path(std::string(exe, static_cast<std::size_t>(n))).parent_path();
}

[[noreturn]] void unavailable(const RunPlan& plan, const std::string& python, const std::string& why) {
  throw std::invalid_argument(fmt::format("--executor {} needs Python with torch and litgpt{} importable: {} failed: {}; {}",
                                          plan.options.compile,
                                          plan.compiler.executor == Executor::python_thunder ? " and lightning-thunder" : "", python,
                                          why, kInstallHint));
}

// The step in its own process group, dying with tokbench, stdin /dev/null, stdout into a pipe
// whose read end is returned; stderr is tokbench's. Exec failures (no such interpreter) come back
// from posix_spawn as `exec_error`.
std::optional<process::Child> spawn_step(const std::vector<std::string>& argv, int& stdout_read, std::string& exec_error) {
  int out[2];
  if (::pipe2(out, O_CLOEXEC) != 0) throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
  const int null_fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  process::SpawnSpec spec;
  spec.argv = argv;
  spec.stdin_fd = null_fd;
  spec.stdout_fd = out[1];
  std::optional<process::Child> child;
  try {
    child.emplace(spec);
  } catch (const std::runtime_error& e) {
    exec_error = e.what();
  }
  ::close(out[1]);
  if (null_fd >= 0) ::close(null_fd);
  if (!child) {
    ::close(out[0]);
    return std::nullopt;
  }
  stdout_read = out[0];
  return child;
}

std::optional<double> number_or_null(const nlohmann::json& j, const char* key) {
  if (!j.contains(key) || !j[key].is_number()) return std::nullopt;
  return j[key].get<double>();
}

std::string base_version(const std::string& v) { return v.substr(0, v.find('+')); }


}  // namespace

PythonStepCommand locate_python_step() {
  PythonStepCommand c;
  std::vector<fs::path> roots;  // checkouts the script may live in, in order of preference
  if (const auto dir = own_directory()) {
    roots.push_back(dir->parent_path().parent_path());  // build/bin/..
    std::error_code ec;
    if (fs::is_regular_file(*dir / kMemoryProbeName, ec)) c.memory_probe = *dir / kMemoryProbeName;
  }
  if (std::string(TOKBENCH_SOURCE_DIR) != "") roots.emplace_back(TOKBENCH_SOURCE_DIR);
  fs::path root;
  if (const char* step = std::getenv("TOKBENCH_PYTHON_STEP"); step != nullptr && *step != '\0') {
    c.script = step;
  } else {
    for (const auto& r : roots) {
      std::error_code ec;
      if (fs::is_regular_file(r / "python" / kScriptName, ec)) {
        c.script = r / "python" / kScriptName;
        root = r;
        break;
      }
    }
  }
  if (const char* python = std::getenv("TOKBENCH_PYTHON"); python != nullptr && *python != '\0') {
    c.python = python;
  } else {
    if (root.empty() && !roots.empty()) root = roots.front();
    for (const auto& r : roots) {
      if (is_executable_file(r / ".venv" / "bin" / "python")) {
        c.python = (r / ".venv" / "bin" / "python").string();
        break;
      }
    }
    if (c.python.empty()) c.python = "python3";
  }
  return c;
}

std::vector<std::string> python_step_argv(const RunPlan& plan, const PythonStepCommand& command,
                                          const distributed::StoreAddress* store) {
  nlohmann::ordered_json config = to_json(plan);
  // What only this process knows: where tokbench's counting allocator is, and the job's store.
  namespace key = train::run_plan_key;
  config[key::step][key::memory_probe] = command.memory_probe.string();
  config[key::step][key::store] = store == nullptr ? nlohmann::ordered_json(nullptr)
                                                   : nlohmann::ordered_json{{key::store_host, store->host},
                                                                            {key::store_port, store->port},
                                                                            {key::store_prefixes, store->prefixes}};
  return {command.python, "-u", command.script.string(), "--config", config.dump()};
}

namespace {

// What the child measured, read from its lines as they come.
struct ChildRun {
  MeasuredRun run;
  bool ready = false;
  bool finished = false;
  process::ExitStatus status;
  std::string unavailable_error;
  bool missing_executor = false;  // the error is a thunder executor this install lacks, not an import
  std::string profile_message;  // --profile: the child's line on where its trace went
  std::string snapshot_message;  // --dump-memory-snapshot: the child's line on where it went
};

ChildRun run_child(const RunPlan& plan, const PythonStepCommand& command, const std::vector<std::string>& argv,
                   machine::Environment& env, std::ostream& report_out, std::FILE* line_stream, bool quiet,
                   process::SignalScope& signals) {
  ChildRun c;
  std::string exec_error;
  int stdout_fd = -1;
  std::optional<process::Child> child = spawn_step(argv, stdout_fd, exec_error);
  if (!child) unavailable(plan, command.python, exec_error);
  // Stop requests while the child runs: the first is forwarded as SIGINT (the step stops after
  // its micro-batch and reports), the second kills it.
  signals.forward_to(child->pid());

  MeasuredRun& run = c.run;
  run.allocation_peaks_known = false;
  run.overhead_known = false;  // the Python step has no harness of tokbench's to measure
  run.exposed_comm_known = false;
  ProgressPrinter progress(ProgressOptions{plan.train.max_iters, plan.train.warmup_iters, plan.options.log_every, quiet,
                                           static_cast<bool>(::isatty(STDERR_FILENO))},
                           stderr, line_stream);
  std::string pending;
  char buffer[65536];
  auto on_line = [&](const std::string& line) {
    const auto j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.is_object() || !j.contains(pk::event)) return;  // not the protocol's
    const std::string event = j.value(pk::event, "");
    if (event == pe::unavailable) {
      c.unavailable_error = j.value(pk::error, "cannot import torch and litgpt");
      c.missing_executor = j.value(pk::executor, false);
    } else if (event == pe::ready) {
      c.ready = true;
      env.python_version = j.value(pk::python_version, "");
      env.python_torch_version = j.value(pk::torch_version, "");
      env.litgpt_version = j.value(pk::litgpt_version, "");
      env.thunder_version = j.value(pk::thunder_version, "");
      env.thunder_executors = j.value(pk::thunder_executors, "");
      if (!quiet) {
        print_config_echo(plan, report_out);
        report_out << fmt::format("# threads: {}; Python {} ({}), torch {}, litgpt {}{}\n", j.value(pk::num_threads, 0),
                                  env.python_version, command.python, env.python_torch_version, env.litgpt_version,
                                  env.thunder_version.empty() ? "" : ", lightning-thunder " + env.thunder_version);
        if (base_version(env.python_torch_version) != base_version(env.libtorch_version))
          report_out << fmt::format("# note: Python's torch {} is not the LibTorch {} tokbench is built with\n",
                                    env.python_torch_version, env.libtorch_version);
        report_out << std::flush;
      }
    } else if (event == pe::iteration) {
      IterationSample s;
      s.index = j.value(pk::index, int64_t{0});
      s.warmup = j.value(pk::warmup, false);
      s.seconds = j.value(pk::seconds, 0.0);
      s.loss = number_or_null(j, pk::loss).value_or(std::numeric_limits<double>::quiet_NaN());
      s.end_time = j.value(pk::end_time, 0.0);
      s.real_tokens = j.value(pk::real_tokens, int64_t{0});
      run.iterations.push_back(s);
      progress.on_iteration(s);
    } else if (event == pe::time_account) {
      auto account = read_python_time_account(j);
      if (auto* pass = std::get_if<train::ProfiledTimeAccount>(&account)) {
        run.time_account = std::move(*pass);
      } else {
        run.time_account_message = "no time account: " + std::get<std::string>(account);
      }
    } else if (event == pe::result) {
      c.finished = true;
      run.outcome = train::run_status_from_string(j.value(pk::status, std::string(train::to_string(Outcome::error))));
      run.message = j.value(pk::message, "");
      run.measured_window_seconds = number_or_null(j, pk::measured_window_seconds).value_or(0);
      run.peak_rss_bytes = static_cast<int64_t>(number_or_null(j, pk::peak_rss_bytes).value_or(0));
      c.profile_message = j.value(pk::profile_message, "");
      c.snapshot_message = j.value(pk::memory_snapshot_message, "");
      if (!c.snapshot_message.empty() && !j.value(pk::memory_snapshot_written, false))
        note_snapshot_failure(run, c.snapshot_message);
      if (j.contains(pk::attention_kernel) && j[pk::attention_kernel].is_string())
        run.attention_kernel = j[pk::attention_kernel].get<std::string>();
      if (const auto allocated = number_or_null(j, pk::allocated_peak_bytes)) {
        run.allocation_peaks_known = true;
        run.allocated_peak_bytes = static_cast<int64_t>(*allocated);
        run.reserved_peak_bytes = static_cast<int64_t>(number_or_null(j, pk::reserved_peak_bytes).value_or(0));
      }
    }
  };
  for (;;) {
    const ssize_t n = ::read(stdout_fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    pending.append(buffer, static_cast<std::size_t>(n));
    for (std::size_t end; (end = pending.find('\n')) != std::string::npos;) {
      on_line(pending.substr(0, end));
      pending.erase(0, end + 1);
    }
  }
  ::close(stdout_fd);
  c.status = child->wait();
  signals.forward_to(0);
  progress.finish();
  return c;
}

}  // namespace

int run_python_benchmark(const RunPlan& plan) {
  const PythonStepCommand command = locate_python_step();
  std::error_code ec;
  if (command.script.empty() || !fs::is_regular_file(command.script, ec))
    throw std::invalid_argument(fmt::format(
        "--executor {} needs the script python/{} of tokbench's checkout: {}; valid: set TOKBENCH_PYTHON_STEP to it",
        plan.options.compile, kScriptName,
        command.script.empty() ? "not found beside the binary nor in its source tree"
                               : "'" + command.script.string() + "' is not a file"));

  std::ostream& report_out = plan.json_to_stdout ? std::cerr : std::cout;
  std::FILE* line_stream = plan.json_to_stdout ? stderr : stdout;
  const bool multi_rank = plan.dist.multi_rank();
  const bool lead = plan.dist.env.rank == 0;  // only rank 0 reports and writes the JSON
  const bool quiet = plan.options.quiet || !lead;
  machine::Environment env = machine::capture_environment();
  env.python_executable = command.python;
  const MetricInputs inputs = metric_inputs(plan);

  process::SignalScope signals;
  // Many ranks: this process joins the job's store as tokbench's own steps do; the child's
  // torch.distributed meets the other children under its own key space in the same store.
  std::unique_ptr<distributed::JobStore> store;
  std::optional<distributed::StoreAddress> child_store;
  std::string rendezvous_error;
  if (multi_rank) {
    try {
      store = std::make_unique<distributed::JobStore>(
          plan.dist.env, std::chrono::milliseconds(static_cast<int64_t>(plan.dist.timeout_seconds * 1000)));
      child_store = store->child_address("tokbench/python");
    } catch (const std::exception& e) {
      rendezvous_error = std::string(e.what()).substr(0, std::string(e.what()).find('\n'));
    }
  }

  ChildRun c;
  if (!rendezvous_error.empty()) {
    c.run.outcome = Outcome::rank_failed;
    c.run.message = "the job's rendezvous failed: " + rendezvous_error;
    c.run.allocation_peaks_known = false;
    c.run.overhead_known = false;
    c.run.exposed_comm_known = false;
    c.finished = c.ready = true;
  } else {
    c = run_child(plan, command, python_step_argv(plan, command, child_store ? &*child_store : nullptr), env,
                  report_out, line_stream, quiet, signals);
  }
  MeasuredRun& run = c.run;
  const process::ExitStatus& status = c.status;
  if (c.missing_executor)
    throw std::invalid_argument(fmt::format("--compile '{}' cannot run with {}: {}", plan.compiler.compiler,
                                            command.python, c.unavailable_error));
  if (!c.unavailable_error.empty()) unavailable(plan, command.python, c.unavailable_error);
  if (!c.ready && signals.stop_count() == 0) {
    const std::string how = status.signal != 0 ? fmt::format("ended by signal {}", status.signal)
                                               : fmt::format("exited with code {}", status.exit_code);
    unavailable(plan, command.python, how + " before it could start (its stderr is above)");
  }
  if (!c.finished) {
    run.outcome = signals.stop_count() > 0 ? Outcome::interrupted : Outcome::error;
    run.message = signals.stop_count() > 1 ? "stopped by a second signal"
                  : status.signal != 0 ? fmt::format("the Python step was ended by signal {}", status.signal)
                                       : fmt::format("the Python step exited with code {} without a result",
                                                     status.exit_code);
    run.measured_window_seconds = 0;
  }

  if (store) {
    gather_rank_results(plan, run, [&](const distributed::RankRecord& mine, std::chrono::milliseconds wait) {
      return store->exchange(mine, plan.world_size(), wait);
    });
  }
  if (!lead) return end_of_other_rank(plan, run);

  const BenchMetrics metrics = compute_metrics(inputs, run);
  const int code = publish_result(plan, run, build_result_json(plan, run, metrics, env), report_out);
  print_after_report(plan, run, {c.profile_message, c.snapshot_message, ""}, report_out);
  return code;
}

}  // namespace tokbench::run
