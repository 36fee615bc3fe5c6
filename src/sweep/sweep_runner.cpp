// The sweep loop (sweep_runner.hpp): one child process per configuration, a timeout, rows
// for every ending, progress with an ETA from the runs so far. The Slurm launcher's loop is
// in slurm_jobs.cpp; the pieces both use are in namespace detail here.
#include "sweep/sweep_runner.hpp"

#include "config/device.hpp"
#include "process/child_process.hpp"
#include "parallel/strategy.hpp"
#include "process/signal_scope.hpp"
#include "files/atomic_file.hpp"
#include "results/read_result.hpp"
#include "results/record_keys.hpp"
#include "results/record_status.hpp"
#include "results/run_record.hpp"
#include "sweep/slurm_jobs.hpp"
#include "sweep/option_rows.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

#include <chrono>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace tokbench::sweep {
namespace {

using Clock = std::chrono::steady_clock;

struct ChildEnd {
  process::ExitStatus status;
  bool timed_out = false;
  bool interrupted = false;
};

// After SIGTERM (timeout or interruption), how long a run gets to report what it measured and
// write its JSON before SIGKILL.
constexpr std::chrono::seconds kTermToKill{30};

// Runs `args` with stdout and stderr into `log`, in its own process group (so a timeout can
// end the run and every rank it started), dying with the sweep if the sweep is killed. The wait
// wakes when the run ends, at the timeout, or at once on the sweep's SIGINT/SIGTERM (`signals`).
ChildEnd run_child(const std::vector<std::string>& args, const std::filesystem::path& log, double timeout_seconds,
                   const process::SignalScope& signals) {
  const int log_fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (log_fd < 0) throw std::runtime_error("cannot open " + log.string() + ": " + std::strerror(errno));
  const int null_fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  process::SpawnSpec spec;
  spec.argv = args;
  spec.stdin_fd = null_fd;
  spec.stdout_fd = log_fd;
  spec.stderr_fd = log_fd;
  std::optional<process::Child> started;
  try {
    started.emplace(spec);
  } catch (...) {
    ::close(log_fd);
    if (null_fd >= 0) ::close(null_fd);
    throw;
  }
  ::close(log_fd);
  if (null_fd >= 0) ::close(null_fd);
  process::Child& child = *started;
  const auto stop_requested = [&signals] { return signals.stop_count() != 0; };
  const std::vector<int> wake{SIGINT, SIGTERM};
  ChildEnd end;
  const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                           std::chrono::duration<double>(std::min(timeout_seconds, 1e9)));
  if (auto status = child.wait_until(deadline, stop_requested, wake)) {
    end.status = *status;
    return end;
  }
  end.interrupted = stop_requested();
  end.timed_out = !end.interrupted;
  child.signal_group(SIGTERM);  // the run reports what it measured and writes its JSON
  if (auto status = child.wait_until(Clock::now() + kTermToKill)) {
    end.status = *status;
    return end;
  }
  child.signal_group(SIGKILL);
  end.status = child.wait();
  return end;
}

}  // namespace

namespace detail {

std::string format_duration(double seconds) {
  const auto s = static_cast<int64_t>(seconds + 0.5);
  if (s >= 3600) return fmt::format("{}h{:02}m{:02}s", s / 3600, s / 60 % 60, s % 60);
  if (s >= 60) return fmt::format("{}m{:02}s", s / 60, s % 60);
  return fmt::format("{}s", s);
}

std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string last_line_of_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return "";
  in.seekg(0, std::ios::end);
  const std::streamoff size = in.tellg();
  const std::streamoff start = size > kLastLineWindow ? size - kLastLineWindow : 0;
  in.seekg(start);
  std::string tail(static_cast<std::size_t>(size - start), '\0');
  in.read(tail.data(), static_cast<std::streamsize>(tail.size()));
  tail.resize(static_cast<std::size_t>(in.gcount()));
  return last_line(tail);
}

std::string last_line(const std::string& text) {
  std::size_t end = text.find_last_not_of("\n \t");
  if (end == std::string::npos) return "";
  std::size_t start = text.rfind('\n', end);
  return text.substr(start == std::string::npos ? 0 : start + 1, end - (start == std::string::npos ? 0 : start + 1) + 1);
}

void write_atomically(const std::filesystem::path& path, const nlohmann::json& j) {
  files::write_file_atomically(path, j.dump(4) + "\n");
}

void write_row(const std::filesystem::path& path, const nlohmann::json& row) {
  try {
    write_atomically(path, row);
  } catch (const std::runtime_error& e) {
    throw OwnFailure(e.what());
  }
}

std::vector<nlohmann::json> gather_rows(const std::vector<Configuration>& configs, const std::filesystem::path& out_dir) {
  std::vector<nlohmann::json> rows;
  for (const auto& c : configs) {
    const auto path = result_path(out_dir, c);
    if (!has_result(path)) continue;
    // The reader explain, compare and predict use: has_result took it, so it reads.
    nlohmann::json row = results::parse_run_record(results::read_record_file(path));
    row[results::key::sweep_config_id] = c.id;
    nlohmann::json options = nlohmann::json::object();
    for (const auto& [key, value] : c.options) options[key] = value;
    row[results::key::sweep_options] = options;
    rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace detail

using namespace detail;  // the local loop below uses them unqualified

std::filesystem::path result_path(const std::filesystem::path& out_dir, const Configuration& config) {
  return out_dir / kRunsFolder / (config.id + ".json");
}

bool has_result(const std::filesystem::path& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return false;
  try {
    // Every reader's checks (results/read_result.hpp): a record no run writes is no result.
    const auto j = results::parse_run_record(results::read_record_file(path));
    return j.contains(results::key::status) && j[results::key::status].is_string();
  } catch (const std::exception&) {
    return false;  // a torn file from a crash, or a damaged one: run the configuration again
  }
}

// The row's label from its options' words, through the one label builder; words a run would
// refuse are shown as given (the row exists to say the run did not start).
std::string distributed_mode_label_of(const Configuration& c) {
  const std::string mode = c.value_of("distributed-mode", "none");
  try {
    const parallel::DistMode dist = parallel::parse_dist_mode(mode);
    const parallel::ShardWord shard = parallel::parse_shard_word(c.value_of("shard-mode", parallel::default_shard_word()));
    return parallel::distributed_mode_label(
        dist, shard.mode, shard.hybrid,
        parallel::effective_unit_policy(dist, parallel::parse_unit_policy(c.value_of("bucketing-mode", "none"))));
  } catch (const std::invalid_argument&) {
    return mode;
  }
}

results::RunRecord synthesized_record(const Configuration& c, const std::string& status, const std::string& message) {
  // An option's value as the configuration gives it: a count, the text where it is none, or
  // null where the configuration does not set it.
  auto given = [&](const std::string& option) -> results::Field<results::Given> {
    const std::string v = c.value_of(option);
    if (v.empty()) return nullptr;
    try {
      std::size_t used = 0;
      const long long n = std::stoll(v, &used);
      if (used == v.size()) return std::int64_t{n};
    } catch (const std::exception&) {
    }
    return v;
  };
  results::RunRecord r;
  r.average_iter_time = nullptr;
  r.tokens_per_sec = nullptr;
  r.memory_used_gb = nullptr;
  r.model_name = c.value_of("model-name", c.value_of("model-config", "pythia-14m"));
  int64_t ranks = 1;
  try {
    ranks = std::stoll(nproc_per_node_of(c)) * std::stoll(nnodes_of(c));
  } catch (const std::exception&) {
  }
  r.num_gpus = ranks;
  r.seq_len = given("seq-len");
  r.micro_bs = given("micro-batch-size").is_null() ? results::Field<results::Given>(std::int64_t{1})
                                                   : given("micro-batch-size");
  r.global_bs = given("global-batch-size");
  r.ga = nullptr;
  r.distributed_mode = distributed_mode_label_of(c);
  r.sharding_size = given("sharding-size");
  r.compiler = executor_of(c);
  r.status = status;
  r.message = message;
  return r;
}

nlohmann::json synthesized_row(const Configuration& c, const std::string& status, const std::string& message) {
  // The sweep's rows have always been written with their keys sorted (nlohmann::json).
  return nlohmann::json(results::to_json(synthesized_record(c, status, message)));
}

  SweepResult run_sweep(const std::vector<Configuration>& configs, const SweepOptions& o) {
  if (o.launcher == Launcher::slurm) return run_slurm_sweep(configs, o);
  SweepResult result;
  try {
    std::filesystem::create_directories(o.out_dir / kRunsFolder);
    std::filesystem::create_directories(o.out_dir / "logs");
  } catch (const std::exception& e) {
    result.harness_failure = e.what();
    return result;
  }
  // SIGINT/SIGTERM for the sweep's lifetime: the current run is stopped (its own JSON says
  // `interrupted`), the sweep ends, and running it again resumes.
  process::SignalScope signals;
  const auto sweep_start = Clock::now();
  double executed_seconds = 0;
  const std::size_t total = configs.size();
  for (std::size_t i = 0; i < total; ++i) {
    const Configuration& c = configs[i];
    const auto path = result_path(o.out_dir, c);
    std::string outcome;
    // Whatever throws in here is the sweep's own failure (a row or log it cannot write, a run it
    // cannot start), never the configuration's: it stops the sweep with no row for `c`, so the
    // same command runs `c` again once the cause is gone.
    try {
      if (has_result(path)) {
        ++result.reused;
        outcome = "done earlier";
      } else if (signals.stop_count() != 0) {
        result.interrupted = true;
        break;
      } else if (const std::string refusal = o.precheck ? o.precheck(c) : ""; !refusal.empty()) {
        // `tokbench run` would refuse it before any work: a row now, without starting it.
        write_atomically(path, synthesized_row(c, std::string(results::kStatusInvalid), refusal));
        ++result.executed;
        outcome = "invalid (not run): " + refusal;
      } else {
        const auto log = o.out_dir / "logs" / (c.id + ".log");
        std::vector<std::string> args{o.tokbench.string(), "run"};
        for (auto& a : c.run_arguments()) args.push_back(a);
        args.insert(args.end(), {"--json-path", path.string(), "--quiet"});
        const auto start = Clock::now();
        const ChildEnd end = run_child(args, log, o.run_timeout_seconds, signals);
        const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
        executed_seconds += seconds;
        ++result.executed;
        const std::string why = last_line_of_file(log);
        if (end.timed_out) {
          // The run wrote `interrupted` for the SIGTERM; the sweep's reason is the timeout.
          nlohmann::json row = has_result(path) ? nlohmann::json::parse(read_text(path)) : synthesized_row(c, "", "");
          row[results::key::status] = "timeout";
          row[results::key::message] = fmt::format("exceeded the per-run timeout of {} s", o.run_timeout_seconds);
          write_atomically(path, row);
        } else if (end.interrupted) {
          std::filesystem::remove(path);  // not finished: the next sweep runs it again
          result.interrupted = true;
        } else if (end.status.signal == 0 && (end.status.exit_code == results::kExitRecordNotWritten ||
                                              end.status.exit_code == results::kExitRuntimeUnavailable)) {
          // The run measured, but could not write its record (or a file it was asked for), or
          // could not start its runtime (exit 9): tokbench's failure, not this configuration's
          // ending. Nothing is recorded (its write was atomic: no file is left).
          --result.executed;
          throw std::runtime_error(fmt::format("`tokbench run` {} (exit {}): {}",
                                               end.status.exit_code == results::kExitRecordNotWritten
                                                   ? "could not write its result"
                                                   : "could not start its runtime",
                                               end.status.exit_code, why.empty() ? "its log is empty" : why));
        } else if (end.status.signal == 0 && end.status.exit_code == 2) {
          write_atomically(path, synthesized_row(c, std::string(results::kStatusInvalid), why));
        } else if (!has_result(path)) {
          write_atomically(path, synthesized_row(c, std::string(results::kStatusError),
                                                 end.status.signal ? fmt::format("killed by signal {}: {}", end.status.signal, why)
                                                                   : fmt::format("exit {} without a result: {}",
                                                                                 end.status.exit_code, why)));
        }
        outcome = result.interrupted ? "interrupted" : nlohmann::json::parse(read_text(path))[results::key::status].get<std::string>();
        outcome += fmt::format(" in {}", format_duration(seconds));
      }
    } catch (const std::exception& e) {
      result.harness_failure = fmt::format("{} (configuration {} not recorded)", e.what(), c.describe());
      break;
    }
    if (o.progress != nullptr) {
      const std::size_t left = total - i - 1;
      const double mean = result.executed > 0 ? executed_seconds / result.executed : 0;
      fmt::print(o.progress, "tokbench sweep: [{}/{}] {}: {}; elapsed {}{}\n", i + 1, total, c.describe(), outcome,
                 format_duration(std::chrono::duration<double>(Clock::now() - sweep_start).count()),
                 result.executed > 0 && left > 0 ? ", ETA " + format_duration(mean * static_cast<double>(left)) : "");
      std::fflush(o.progress);
    }
    if (result.interrupted) break;
  }
  result.runs = detail::gather_rows(configs, o.out_dir);
  return result;
}

}  // namespace tokbench::sweep
