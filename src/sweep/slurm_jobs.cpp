// Slurm jobs for a sweep (slurm_jobs.hpp): the batch script, submitting, watching the jobs,
// and a row for every ending.
#include "sweep/slurm_jobs.hpp"

#include "results/record_keys.hpp"
#include "results/record_status.hpp"

#include "process/child_process.hpp"
#include "process/signal_scope.hpp"
#include "sweep/shell_words.hpp"
#include "sweep/option_rows.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstring>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <thread>

namespace tokbench::sweep {
namespace {

using Clock = std::chrono::steady_clock;
using detail::format_duration;
using detail::last_line;
using detail::last_line_of_file;
using detail::read_text;
using detail::write_atomically;

int64_t positive_or_one(const std::string& text) {
  try {
    std::size_t used = 0;
    const long long n = std::stoll(text, &used);
    if (used == text.size() && n >= 1) return n;
  } catch (const std::exception&) {
  }
  return 1;  // a bad value is the precheck's to refuse, with the run's own message
}

// Text for a comment line of the batch script: control characters (a line break would end the
// comment and start a command) become '?'.
std::string one_line(std::string text) {
  for (char& c : text)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
  return text;
}
bool one_line_safe(const std::string& text) { return one_line(text) == text; }

std::string shell_quote(const std::string& text) {
  std::string out = "'";
  for (const char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

struct CommandOutput {
  int exit_code = -1;
  std::string text;  // stdout and stderr together
};

// Slurm's commands answer in moments; one that hangs (a controller that is down) must not hang
// the sweep: it ends after this long and counts as a failed call (retried at the next poll).
constexpr std::chrono::seconds kSlurmCommandTimeout{120};
// Their answers are a line or a page; more than this is dropped, not buffered.
constexpr std::size_t kSlurmOutputBound = 1 << 20;

// Runs a Slurm command (an argv, no shell) and captures what it printed.
CommandOutput run_command(const std::vector<std::string>& args) {
  CommandOutput out;
  process::CapturedRun run;
  try {
    run = process::run_captured(args, kSlurmOutputBound, kSlurmCommandTimeout);
  } catch (const std::runtime_error& e) {
    // Not installed (sacct on a cluster without accounting): the shell's 127, and why.
    out.exit_code = 127;
    out.text = e.what();
    return out;
  }
  out.exit_code = run.timed_out ? 124 : run.status.shell_status();  // 124: timeout(1)'s status
  out.text = run.output;
  if (run.timed_out) out.text += fmt::format("\n{} did not answer within {} s", args.front(), kSlurmCommandTimeout.count());
  return out;
}

std::string field_value(const std::string& line, const std::string& key) {
  std::size_t at = 0;
  while ((at = line.find(key + "=", at)) != std::string::npos) {
    if (at == 0 || line[at - 1] == ' ' || line[at - 1] == '\t') {
      const std::size_t start = at + key.size() + 1;
      return line.substr(start, line.find_first_of(" \t\n", start) - start);
    }
    at += key.size();
  }
  return "";
}

void parse_exit_code(const std::string& text, SlurmJobState& s) {
  const std::size_t colon = text.find(':');
  try {
    s.exit_code = std::stoi(text.substr(0, colon));
    if (colon != std::string::npos) s.signal = std::stoi(text.substr(colon + 1));
  } catch (const std::exception&) {
  }
}

// What Slurm says about a job now: the controller (scontrol) while it remembers the job
// (MinJobAge after it ends), else accounting (sacct) where the cluster keeps it.
SlurmJobState query_job(int64_t job_id) {
  const std::string id = std::to_string(job_id);
  const CommandOutput control = run_command({"scontrol", "show", "job", "-o", id});
  if (control.exit_code == 0) {
    const SlurmJobState s = parse_scontrol_job(control.text);
    if (s.state != "UNKNOWN") return s;
  }
  const CommandOutput accounting = run_command({"sacct", "-n", "-P", "-X", "-j", id, "-o", "State,ExitCode"});
  if (accounting.exit_code == 0) return parse_sacct_job(accounting.text);
  return SlurmJobState{};
}

// OUT/slurm-jobs.json: configuration id -> the job that is producing its result.
class JobRecord {
 public:
  explicit JobRecord(std::filesystem::path path) : path_(std::move(path)) {
    std::error_code ec;
    if (!std::filesystem::exists(path_, ec)) return;
    try {
      const auto j = nlohmann::json::parse(read_text(path_));
      for (const auto& [config_id, job] : j.items()) jobs_[config_id] = job.get<int64_t>();
    } catch (const std::exception& e) {
      throw std::runtime_error(fmt::format("{} is not a job record ({}); remove it if no job of this sweep is in "
                                           "Slurm's queue", path_.string(), e.what()));
    }
  }
  std::optional<int64_t> job_of(const std::string& config_id) const {
    const auto it = jobs_.find(config_id);
    if (it == jobs_.end()) return std::nullopt;
    return it->second;
  }
  void set(const std::string& config_id, int64_t job_id) {
    jobs_[config_id] = job_id;
    save();
  }
  void erase(const std::string& config_id) {
    if (jobs_.erase(config_id) > 0) save();
  }

 private:
  void save() const {
    nlohmann::json j = nlohmann::json::object();
    for (const auto& [config_id, job] : jobs_) j[config_id] = job;
    write_atomically(path_, j);
  }
  std::filesystem::path path_;
  std::map<std::string, int64_t> jobs_;
};

struct InFlight {
  std::size_t index = 0;  // into configs
  int64_t job_id = 0;
  Clock::time_point since;
  bool earlier = false;  // submitted by an earlier sweep, adopted by this one
};

}  // namespace

std::vector<std::string> slurm_run_arguments(const Configuration& config) {
  Configuration without_launcher = config;
  std::erase_if(without_launcher.options, [](const auto& option) { return is_launcher_option(option.first); });
  return without_launcher.run_arguments();
}

int64_t slurm_nodes(const Configuration& config) { return positive_or_one(nnodes_of(config)); }

int64_t slurm_tasks_per_node(const Configuration& config) {
  return positive_or_one(nproc_per_node_of(config));
}

int64_t slurm_time_limit_minutes(double timeout_seconds) {
  return std::max<int64_t>(1, static_cast<int64_t>(std::ceil(timeout_seconds / 60.0)));
}

std::string slurm_batch_script(const Configuration& c, const std::filesystem::path& tokbench,
                               const std::filesystem::path& result, const std::filesystem::path& log,
                               double timeout_seconds) {
  const int64_t tasks = slurm_tasks_per_node(c);
  std::string s = "#!/bin/bash\n";
  s += fmt::format("# tokbench sweep, configuration {}: {}\n", c.id, one_line(c.describe()));
  s += fmt::format("#SBATCH --job-name=tokbench-{}\n", c.id);
  s += fmt::format("#SBATCH --nodes={}\n", slurm_nodes(c));
  s += fmt::format("#SBATCH --ntasks-per-node={}\n", tasks);
  const std::string threads = num_threads_of(c);
  if (!threads.empty() && threads != "0") s += fmt::format("#SBATCH --cpus-per-task={}\n", positive_or_one(threads));
  if (device_of(c).rfind("cuda", 0) == 0) s += fmt::format("#SBATCH --gpus-per-node={}\n", tasks);
  s += fmt::format("#SBATCH --time={}\n", slurm_time_limit_minutes(timeout_seconds));
  // sbatch reads its directives itself, unquoted: a path it cannot take is refused here.
  if (!one_line_safe(log.string()))
    throw std::invalid_argument("the sweep's output folder '" + one_line(log.parent_path().string()) +
                                "' holds a line break or another control character, which a Slurm batch "
                                "script cannot carry; valid: a folder path without them");
  s += fmt::format("#SBATCH --output={}\n", log.string());
  s += "echo \"tokbench sweep: Slurm job ${SLURM_JOB_ID} on ${SLURM_JOB_NODELIST}\"\n";
  s += "# Ranks take their places from srun's SLURM_* variables, not from another launcher's\n"
       "# variables that the sweep's environment may hold (those would win).\n"
       "unset RANK WORLD_SIZE LOCAL_RANK LOCAL_WORLD_SIZE MASTER_ADDR TOKBENCH_LAUNCHED TORCHELASTIC_USE_AGENT_STORE\n"
       "unset OMPI_COMM_WORLD_SIZE OMPI_COMM_WORLD_RANK\n";
  const std::string port = c.value_of("master-port");
  if (!port.empty() && port != "0") {
    s += fmt::format("export MASTER_PORT={}\n", shell_quote(port));
  } else {
    s += "# Rank 0's store port: one per job id, so jobs sharing a node do not collide.\n"
         "export MASTER_PORT=$((20000 + SLURM_JOB_ID % 40000))\n";
  }
  std::string command = fmt::format("exec srun {} run", shell_quote(tokbench.string()));
  for (const auto& a : slurm_run_arguments(c)) command += fmt::format(" {}", shell_quote(a));
  command += " --json-path " + shell_quote(result.string()) + " --quiet";
  return s + command + "\n";
}

std::vector<std::string> sbatch_argv(const std::string& sbatch_arguments, const std::filesystem::path& script) {
  std::vector<std::string> argv{"sbatch", "--parsable"};
  for (auto& word : split_shell_words("--slurm-args", sbatch_arguments)) argv.push_back(std::move(word));
  argv.push_back(script.string());
  return argv;
}

SlurmJobState parse_scontrol_job(const std::string& text) {
  const std::string line = text.substr(0, text.find('\n'));  // a job array's first element
  SlurmJobState s;
  const std::string state = field_value(line, "JobState");
  if (state.empty()) return s;
  s.state = state;
  parse_exit_code(field_value(line, "ExitCode"), s);
  return s;
}

SlurmJobState parse_sacct_job(const std::string& text) {
  const std::string line = text.substr(0, text.find('\n'));
  SlurmJobState s;
  const std::size_t bar = line.find('|');
  if (bar == std::string::npos || bar == 0) return s;
  s.state = line.substr(0, std::min(bar, line.find(' ')));  // "CANCELLED by 0"
  parse_exit_code(line.substr(bar + 1), s);
  return s;
}

bool slurm_job_ended(const std::string& state) {
  static const std::set<std::string> kEnded{"COMPLETED", "FAILED",    "CANCELLED", "TIMEOUT", "OUT_OF_MEMORY",
                                            "NODE_FAIL", "PREEMPTED", "BOOT_FAIL", "DEADLINE", "UNKNOWN"};
  return kEnded.count(state) > 0;
}

JobEnding slurm_job_ending(const SlurmJobState& job, int64_t job_id, const std::string& last_log_line,
                           double timeout_seconds) {
  const std::string why = last_log_line.empty() ? "" : ": " + last_log_line;
  if (job.state == "TIMEOUT")
    return {std::string(results::kStatusTimeout),
            fmt::format("Slurm job {} exceeded its time limit of {} min (the per-run timeout of {} s)", job_id,
                        slurm_time_limit_minutes(timeout_seconds), timeout_seconds)};
  if (job.state == "OUT_OF_MEMORY")
    return {std::string(results::kStatusOom), fmt::format("Slurm job {} ran out of memory{}", job_id, why)};
  // Exit 2 is the run refusing its options on the node (no GPU there, the model does not fit).
  if ((job.state == "FAILED" || job.state == "COMPLETED") && job.exit_code == 2 && job.signal == 0)
    return {std::string(results::kStatusInvalid), last_log_line};
  if (job.state == "UNKNOWN")
    return {std::string(results::kStatusError),
            fmt::format("Slurm no longer knows job {} and it left no result{}", job_id, why)};
  return {std::string(results::kStatusError),
          fmt::format("Slurm job {} ended {} (exit code {}:{}) without a result{}", job_id, job.state,
                      job.exit_code, job.signal, why)};
}

SweepResult run_slurm_sweep(const std::vector<Configuration>& configs, const SweepOptions& o) {
  const std::filesystem::path out_dir = std::filesystem::absolute(o.out_dir);
  std::filesystem::create_directories(out_dir / kRunsFolder);
  std::filesystem::create_directories(out_dir / "logs");
  std::filesystem::create_directories(out_dir / "slurm");
  JobRecord record(out_dir / "slurm-jobs.json");
  // SIGINT/SIGTERM for the sweep's lifetime: no further job is submitted, the sweep ends, and
  // running it again resumes.
  process::SignalScope signals;
  SweepResult result;
  const auto sweep_start = Clock::now();
  const std::size_t total = configs.size();
  std::size_t reported = 0;
  double finished_seconds = 0;
  int finished_jobs = 0;

  auto progress = [&](const Configuration& c, const std::string& outcome) {
    ++reported;
    if (o.progress == nullptr) return;
    const std::size_t left = total - reported;
    const double mean = finished_jobs > 0 ? finished_seconds / finished_jobs : 0;
    const double eta = mean * static_cast<double>(left) / std::max(1, o.slurm.max_jobs);
    fmt::print(o.progress, "tokbench sweep: [{}/{}] {}: {}; elapsed {}{}\n", reported, total, c.describe(), outcome,
               format_duration(std::chrono::duration<double>(Clock::now() - sweep_start).count()),
               finished_jobs > 0 && left > 0 ? ", ETA " + format_duration(eta) : "");
    std::fflush(o.progress);
  };
  auto note = [&](const std::string& line) {
    if (o.progress == nullptr) return;
    fmt::print(o.progress, "tokbench sweep: {}\n", line);
    std::fflush(o.progress);
  };

  // A job has ended: its own result stands unless Slurm ended it (then the row says how).
  auto finish = [&](const InFlight& job, const SlurmJobState& state) {
    const Configuration& c = configs[job.index];
    const auto path = result_path(out_dir, c);
    const auto log = out_dir / "logs" / (c.id + ".log");
    nlohmann::json row;
    const bool own = has_result(path);
    if (!own && state.signal == 0 &&
        (state.exit_code == results::kExitRecordNotWritten || state.exit_code == results::kExitRuntimeUnavailable)) {
      // The run could not write its result, or could not start its runtime on the node (exit 9,
      // as the local runner reads it): tokbench's failure, not the configuration's. No row, and
      // the job is forgotten, so the next sweep submits the configuration again.
      record.erase(c.id);
      const std::string why = last_line_of_file(log);
      throw detail::OwnFailure(fmt::format("Slurm job {}: `tokbench run` {} (exit {}): {} (configuration {} not "
                                           "recorded)", job.job_id,
                                           state.exit_code == results::kExitRecordNotWritten
                                               ? "could not write its result"
                                               : "could not start its runtime",
                                           state.exit_code, why.empty() ? "its log is empty" : why, c.describe()));
    }
    if (own) row = nlohmann::json::parse(read_text(path));
    const bool own_stands = own && row[results::key::status] != "interrupted" && state.state != "TIMEOUT";
    if (!own_stands) {
      const JobEnding ending = slurm_job_ending(state, job.job_id, last_line_of_file(log), o.run_timeout_seconds);
      if (!own) row = synthesized_row(c, ending.status, ending.message);
      row[results::key::status] = ending.status;
      row[results::key::message] = ending.message;
    }
    row[results::key::slurm_job_id] = job.job_id;
    detail::write_row(path, row);
    record.erase(c.id);
    const double seconds = std::chrono::duration<double>(Clock::now() - job.since).count();
    finished_seconds += seconds;
    ++finished_jobs;
    ++result.executed;
    progress(c, fmt::format("{} in {} (Slurm job {}{})", row[results::key::status].get<std::string>(), format_duration(seconds),
                            job.job_id, job.earlier ? ", submitted by an earlier sweep" : ""));
  };

  auto submit = [&](std::size_t index) -> InFlight {
    const Configuration& c = configs[index];
    const auto script = out_dir / "slurm" / (c.id + ".sbatch");
    {
      std::ofstream out(script);
      out << slurm_batch_script(c, o.tokbench, result_path(out_dir, c), out_dir / "logs" / (c.id + ".log"),
                                o.run_timeout_seconds);
      if (!out) throw std::runtime_error("cannot write " + script.string());
    }
    const CommandOutput submitted = run_command(sbatch_argv(o.slurm.sbatch_arguments, script));
    std::size_t digits = 0;
    while (digits < submitted.text.size() && std::isdigit(static_cast<unsigned char>(submitted.text[digits])))
      ++digits;
    if (submitted.exit_code != 0 || digits == 0)
      throw std::runtime_error(fmt::format("sbatch refused configuration {} ({}): {}; the sweep stops (jobs already "
                                           "submitted are in {}; run it again to resume)",
                                           c.id, c.describe(), last_line(submitted.text),
                                           (out_dir / "slurm-jobs.json").string()));
    InFlight job{index, std::stoll(submitted.text.substr(0, digits)), Clock::now(), false};
    record.set(c.id, job.job_id);
    note(fmt::format("submitted {} as Slurm job {}", c.describe(), job.job_id));
    return job;
  };

  // Configurations with a result are reused; those whose job an earlier sweep left queued
  // or running are waited for; the rest wait their turn, in matrix order.
  std::vector<InFlight> in_flight;
  std::vector<std::size_t> waiting;
  // Tokbench's own failure stops the sweep (harness_failure); jobs still in flight stay in
  // slurm-jobs.json, so the next sweep waits for them instead of submitting them again.
  try {
    for (std::size_t i = 0; i < total; ++i) {
      const Configuration& c = configs[i];
      const auto earlier_job = record.job_of(c.id);
      if (has_result(result_path(out_dir, c)) && !earlier_job) {
        ++result.reused;
        progress(c, "done earlier");
        continue;
      }
      if (earlier_job) {
        const SlurmJobState state = query_job(*earlier_job);
        if (!slurm_job_ended(state.state)) {
          in_flight.push_back({i, *earlier_job, Clock::now(), true});
          note(fmt::format("waiting for Slurm job {} ({}) submitted by an earlier sweep", *earlier_job, c.describe()));
          continue;
        }
        if (state.state != "UNKNOWN") {
          finish({i, *earlier_job, Clock::now(), true}, state);
          continue;
        }
        record.erase(c.id);  // Slurm forgot the job and it left nothing: submit again
        if (has_result(result_path(out_dir, c))) {
          ++result.reused;
          progress(c, "done earlier");
          continue;
        }
      }
      waiting.push_back(i);
    }

    std::size_t next = 0;
    while (next < waiting.size() || !in_flight.empty()) {
      if (signals.stop_count() != 0) {
        result.interrupted = true;
        break;
      }
      while (next < waiting.size() && static_cast<int>(in_flight.size()) < o.slurm.max_jobs) {
        const std::size_t index = waiting[next++];
        const Configuration& c = configs[index];
        // Refused on the node too, so refused here without a job.
        const std::string refusal = o.precheck ? o.precheck(c) : "";
        if (!refusal.empty()) {
          detail::write_row(result_path(out_dir, c), synthesized_row(c, std::string(results::kStatusInvalid), refusal));
          ++result.executed;
          progress(c, "invalid (not submitted)");
          continue;
        }
        in_flight.push_back(submit(index));
      }
      for (std::size_t k = 0; k < in_flight.size();) {
        const SlurmJobState state = query_job(in_flight[k].job_id);
        if (slurm_job_ended(state.state)) {
          finish(in_flight[k], state);
          in_flight.erase(in_flight.begin() + static_cast<std::ptrdiff_t>(k));
        } else {
          ++k;
        }
      }
      if (!in_flight.empty() || next < waiting.size())
        std::this_thread::sleep_for(std::chrono::duration<double>(o.slurm.poll_seconds));
    }
  } catch (const detail::OwnFailure& e) {
    result.harness_failure = e.what();
    result.runs = detail::gather_rows(configs, out_dir);
    return result;
  }

  if (result.interrupted && !in_flight.empty()) {
    // Ctrl-C: the sweep's jobs are cancelled, not left training unobserved. Their runs write
    // `interrupted` on Slurm's SIGTERM; such results are dropped, so the next sweep reruns them.
    std::vector<std::string> cancel{"scancel"};
    std::string ids;
    for (const auto& job : in_flight) {
      cancel.push_back(std::to_string(job.job_id));
      ids += fmt::format("{}{}", ids.empty() ? "" : " ", job.job_id);
    }
    const CommandOutput cancelled = run_command(cancel);
    note(fmt::format("interrupted: cancelled Slurm job(s) {}{}", ids,
                     cancelled.exit_code == 0 ? "" : " (scancel: " + last_line(cancelled.text) + ")"));
    const auto deadline = Clock::now() + std::chrono::seconds(120);
    for (const auto& job : in_flight) {
      bool ended = false;
      while (!(ended = slurm_job_ended(query_job(job.job_id).state)) && Clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::milliseconds(500));
      if (!ended) continue;  // still recorded: the next sweep waits for it
      const Configuration& c = configs[job.index];
      const auto path = result_path(out_dir, c);
      if (has_result(path) && nlohmann::json::parse(read_text(path))[results::key::status] == "interrupted")
        std::filesystem::remove(path);
      record.erase(c.id);
    }
  }
  result.runs = detail::gather_rows(configs, out_dir);
  return result;
}

}  // namespace tokbench::sweep
