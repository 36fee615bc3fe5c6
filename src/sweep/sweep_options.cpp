// sweep_options.hpp.
#include "sweep/sweep_options.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <stdexcept>

#include "config/device.hpp"
#include "sweep/matrix.hpp"
#include "sweep/option_rows.hpp"
#include "sweep/shell_words.hpp"
#include "usage/usage_error.hpp"

namespace tokbench::sweep {
namespace {

// Whether a program is an executable file in one of PATH's folders.
bool on_path(const std::string& program) {
  const char* path = std::getenv("PATH");
  std::string folders = path != nullptr ? path : "";
  std::size_t start = 0;
  while (start <= folders.size()) {
    const std::size_t colon = std::min(folders.find(':', start), folders.size());
    const std::string folder = folders.substr(start, colon - start);
    const std::string candidate = (folder.empty() ? "." : folder) + "/" + program;
    if (::access(candidate.c_str(), X_OK) == 0) return true;
    start = colon + 1;
  }
  return false;
}

// A run longer than this is no benchmark (and a larger value would overflow the clocks that
// wait for it): 30 days, beyond any Slurm partition's usual time limit.
constexpr double kMaxTimeoutSeconds = 30.0 * 24 * 3600;
constexpr int kMaxSlurmJobs = 10000;

}  // namespace

const results::ReporterPlugin& chosen_format(const SweepCommandOptions& o) {
  if (!o.format.empty()) return results::format_from_string(o.format);
  const char* env = std::getenv("BENCHMARK_OUT_FORMAT");  // the reference runner's switch
  return results::format_from_string(env != nullptr && *env != '\0' ? env : "print", "BENCHMARK_OUT_FORMAT");
}

// The sweep's own options, held to the range checks `tokbench run` applies to its own.
void check_sweep_options(const SweepCommandOptions& o) {
  if (!(o.timeout_s > 0) || !(o.timeout_s <= kMaxTimeoutSeconds))
    throw std::invalid_argument(fmt::format("--timeout {} is not valid; valid: seconds, more than 0 and at most {:.0f} "
                                            "(30 days)", o.timeout_s, kMaxTimeoutSeconds));
  if (o.out_dir.empty()) throw std::invalid_argument("--out '' is not valid; valid: a folder for the sweep's runs");
  if (o.slurm_max_jobs > kMaxSlurmJobs)
    throw std::invalid_argument(fmt::format("--slurm-max-jobs {} is not valid; valid: 1..{} jobs at once",
                                            o.slurm_max_jobs, kMaxSlurmJobs));
}

Launcher chosen_launcher(const SweepCommandOptions& o, bool slurm_options_given) {
  if (o.launcher != "local" && o.launcher != "slurm")
    throw std::invalid_argument(fmt::format("--launcher '{}' is not valid; valid: local, slurm", o.launcher));
  if (o.launcher == "local") {
    if (slurm_options_given)
      throw std::invalid_argument("--slurm-args and --slurm-max-jobs apply to --launcher slurm only");
    return Launcher::local;
  }
  if (o.slurm_max_jobs < 1)
    throw std::invalid_argument(fmt::format("--slurm-max-jobs {} is not valid; valid: 1 or more jobs at once",
                                            o.slurm_max_jobs));
  split_shell_words("--slurm-args", o.slurm_args);  // refused now, not at the first submission
  for (const char* program : {"sbatch", "scontrol", "scancel"})
    if (!on_path(program))
      throw std::invalid_argument(fmt::format("--launcher slurm needs Slurm's `{}` on PATH, and it is not there; "
                                              "valid here: --launcher local", program));
  return Launcher::slurm;
}

SweepChoices check_sweep_choices(const SweepCommandOptions& o, bool slurm_options_given) {
  const Launcher launcher = chosen_launcher(o, slurm_options_given);
  const results::ReporterPlugin& format = chosen_format(o);
  if (format.file != results::FileUse::never && o.output.empty())
    throw std::invalid_argument(fmt::format("--format {} writes a file: name it with --output FILE", format.name));
  check_sweep_options(o);
  return {launcher, &format};
}

SweepOptionHandles add_sweep_options(CLI::App& sub, SweepCommandOptions& o) {
  SweepOptionHandles handles;
  sub.add_option("--matrix", o.matrix_file, "TOML file: every key a run option, a list value an axis");
  sub.add_option("--out", o.out_dir, "folder for each run's JSON and log (resumes from it)")->capture_default_str();
  sub.add_option("--format", o.format, "print | csv | json | markdown | xlsx | html (default: "
                                        "$BENCHMARK_OUT_FORMAT, else print)");
  sub.add_option("--output", o.output, "write the tables to this file (needed for xlsx and html)");
  sub.add_option("--store", o.store, "SQLite result store (default OUT/tokbench-results.sqlite; none: off)");
  sub.add_option("--timeout", o.timeout_s, "seconds one configuration may run (under Slurm: the job's time "
                                            "limit, rounded up to minutes)")->capture_default_str();
  sub.add_option("--launcher", o.launcher, "local (child processes here) | slurm (one sbatch job per "
                                            "configuration, ranks started by srun)")->capture_default_str();
  handles.slurm_args = sub.add_option("--slurm-args", o.slurm_args,
                                    "more sbatch arguments for every job, e.g. \"--partition gpu --account x\" "
                                    "(split into words as a shell would, never run by one)");
  handles.slurm_max_jobs = sub.add_option("--slurm-max-jobs", o.slurm_max_jobs,
                                        "Slurm jobs queued or running at once")->capture_default_str();
  sub.add_flag("--only-varying", o.only_varying, "show only the index columns that vary");
  sub.add_flag("--dry-run", o.dry_run, "list the configurations and run nothing");
  sub.add_option("--predict", o.predict,
                 "CLUSTER: a preset, a FILE.toml or measured (tokbench predict's); every multi-rank row also gets "
                 "a prediction from its one-rank run, in an '<executor> predicted' column");
  sub.add_option("--comm", o.comm, "with --predict measured: tokbench comm's JSON, one per world size")
      ->delimiter(',');
  sub.add_flag("--predict-only", o.predict_only,
               "with --predict: run only the one-rank rows; the multi-rank rows are predictions (status predicted)");
  sub.add_option("--explain-against", o.explain_against,
                 "COLUMN: explain each configuration's other columns against its run in COLUMN, category by "
                 "category of their time accounts (as tokbench explain; after the tables)");
  sub.allow_extras();
  sub.footer("Every other option is a `tokbench run` option; a comma-separated value is an axis:\n"
             "  tokbench sweep --model-name pythia-14m,pythia-70m --micro-batch-size 1,2 --nproc-per-node 1,2\n"
             "A --matrix TOML file holds the same keys; [[matrix]] tables give several matrices in one sweep.\n"
             "Points with one rank run without a distributed mode (as the reference's one-GPU rows).\n"
             "Failed configurations are rows with their status (invalid, oom, nan, timeout, error, rank_failed).\n"
             "--launcher slurm submits each configuration as a Slurm job (docs/sweep.md).\n"
             "--predict h100-sxm-8 --predict-only: from one-rank rows measured here, the multi-rank rows predicted\n"
             "on another cluster (docs/predict.md).");
  return handles;
}

void check_explain_column(const std::string& column, const std::vector<Configuration>& configurations) {
  if (column.empty()) return;
  std::vector<std::string> columns;
  for (const auto& c : configurations) {
    const std::string name = executor_of(c);
    if (std::find(columns.begin(), columns.end(), name) == columns.end()) columns.push_back(name);
  }
  if (std::find(columns.begin(), columns.end(), column) != columns.end()) return;
  std::string valid;
  for (const auto& name : columns) valid += (valid.empty() ? "" : ", ") + name;
  throw std::invalid_argument("--explain-against '" + usage::printable(column) + "' is not a column of this sweep; "
                              "valid: " + valid + " (the --compile values of its configurations)");
}

}  // namespace tokbench::sweep
