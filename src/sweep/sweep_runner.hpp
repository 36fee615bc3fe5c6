// Runs a sweep: each configuration as its own `tokbench run` process (which starts its own
// ranks with --nproc-per-node), under a per-run timeout, so an OOM, a NaN, a crash or a hang
// is one labelled row and the sweep goes on. Results live in OUT/runs/<config id>.json,
// written atomically by the run (or by the sweep for rows that never produced one), so a
// sweep killed at any moment and started again with the same arguments reruns nothing that
// finished and loses nothing that did.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdio>
#include <ios>
#include <filesystem>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "results/run_record.hpp"
#include "sweep/matrix.hpp"

namespace tokbench::sweep {

// Where the runs happen: child processes of the sweep on this machine, or Slurm jobs
// (slurm_jobs.hpp), one per configuration.
enum class Launcher { local, slurm };

struct SlurmSettings {
  std::string sbatch_arguments;  // --slurm-args: added to every sbatch call, split as a shell would
  int max_jobs = 1;              // jobs queued or running at once
  double poll_seconds = 1;       // how often the jobs' states are asked for
};

struct SweepOptions {
  std::filesystem::path tokbench;      // the program each run executes (`tokbench run ...`)
  std::filesystem::path out_dir;       // runs/, logs/, sweep.json
  double run_timeout_seconds = 3600;   // per configuration, then SIGTERM, then SIGKILL
  std::FILE* progress = stderr;        // progress lines; null: none
  Launcher launcher = Launcher::local;
  SlurmSettings slurm;                 // with Launcher::slurm
  // The line `tokbench run` would refuse a configuration with, or empty: invalid ones become
  // rows without a run or a job. Given by the CLI, which knows the run's options
  // (bench/precheck.hpp); the same check `--dry-run` shows.
  std::function<std::string(const Configuration&)> precheck;
};

struct SweepResult {
  std::vector<nlohmann::json> runs;  // one per configuration, in matrix order
  int executed = 0;                  // configurations run now
  int reused = 0;                    // finished earlier (resumed)
  bool interrupted = false;          // SIGINT/SIGTERM: the sweep stopped; run it again to resume
  // Non-empty when the sweep stopped because tokbench's own output failed — a result, row or log
  // it could not write (the disk full), a run that exited results::kExitRecordNotWritten, a run
  // it could not start — rather than because of a configuration: one line saying what. The
  // configuration it was on has no row (it runs when the sweep is started again); every
  // configuration finished before it keeps its row.
  std::string harness_failure;
};

SweepResult run_sweep(const std::vector<Configuration>& configs, const SweepOptions& options);

// The result file of a configuration, and whether it holds a finished row (any status).
// The folder of a sweep's results under its OUT directory (OUT/runs/<config id>.json), which
// compare also reads a sweep's directory by.
inline constexpr char kRunsFolder[] = "runs";
std::filesystem::path result_path(const std::filesystem::path& out_dir, const Configuration& config);
bool has_result(const std::filesystem::path& path);

// A row for a configuration that produced no result of its own (refused as invalid, timed
// out, crashed): the index columns the tables need, read from its options.
nlohmann::json synthesized_row(const Configuration& config, const std::string& status, const std::string& message);
// The same row as a record, for code that adds to it (the predicted column's rows).
results::RunRecord synthesized_record(const Configuration& config, const std::string& status, const std::string& message);

// Shared by both launchers.
namespace detail {
// A failure of tokbench itself (a row it cannot write, a run that could not write its result):
// it stops the sweep as SweepResult::harness_failure, never as a configuration's row.
struct OwnFailure : std::runtime_error {
  using std::runtime_error::runtime_error;
};
// write_atomically, its failure an OwnFailure.
void write_row(const std::filesystem::path& path, const nlohmann::json& row);
std::string read_text(const std::filesystem::path& path);
std::string last_line(const std::string& text);  // the last non-empty line: why a run ended
// The last non-empty line of a file, read from its end: at most kLastLineWindow bytes of a log
// that may be gigabytes (a run that printed every iteration for a day) are ever read.
inline constexpr std::streamoff kLastLineWindow = 64 * 1024;
std::string last_line_of_file(const std::filesystem::path& path);
void write_atomically(const std::filesystem::path& path, const nlohmann::json& j);
std::string format_duration(double seconds);
// Every configuration's finished row (matrix order), with sweep_config_id and sweep_options.
std::vector<nlohmann::json> gather_rows(const std::vector<Configuration>& configs, const std::filesystem::path& out_dir);
}  // namespace detail

}  // namespace tokbench::sweep
