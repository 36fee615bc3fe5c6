// The options of `tokbench sweep`: the sweep's own (the run options it sweeps are `tokbench
// run`'s, run/run_options.hpp), registered on a CLI11 command by add_sweep_options with their
// help text, and checked before any configuration runs: each refusal is one line (exit 2).
#pragma once

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

#include "sweep/sweep_runner.hpp"
#include "results/tables.hpp"

namespace tokbench::sweep {

struct SweepCommandOptions {
  std::string matrix_file;
  std::string out_dir = "tokbench-sweep";
  std::string format;  // empty: BENCHMARK_OUT_FORMAT, else print
  std::string output;  // file for the tables (xlsx/html need one); empty: stdout
  std::string store;   // empty: OUT/tokbench-results.sqlite; "none": no store
  double timeout_s = 3600;
  std::string launcher = "local";  // local | slurm
  std::string slurm_args;          // extra sbatch arguments
  int slurm_max_jobs = 1;
  bool only_varying = false;
  bool dry_run = false;
  std::string predict;            // --predict CLUSTER: predicted columns beside the measured ones
  std::vector<std::string> comm;  // --comm: with --predict measured, tokbench comm's documents
  bool predict_only = false;      // run only the one-rank rows; the others are predictions
  std::string explain_against;    // a column (compiler name): every other column's runs explained against it
};

// The options whose presence matters beyond their value (Slurm's, refused with --launcher local).
struct SweepOptionHandles {
  CLI::Option* slurm_args = nullptr;
  CLI::Option* slurm_max_jobs = nullptr;
  bool slurm_options_given() const { return slurm_args->count() > 0 || slurm_max_jobs->count() > 0; }
};
SweepOptionHandles add_sweep_options(CLI::App& sub, SweepCommandOptions& o);

// What `tokbench sweep`'s command line is read into: the values and the handles above.
struct SweepCommandLine {
  SweepCommandOptions options;
  SweepOptionHandles handles;
};

// The reporter of --format, else $BENCHMARK_OUT_FORMAT (the reference runner's switch), else print.
const results::ReporterPlugin& chosen_format(const SweepCommandOptions& o);
// The range checks `tokbench run` applies to its own options, for the sweep's.
void check_sweep_options(const SweepCommandOptions& o);
// --explain-against: the column must be one of the sweep's (each configuration's --compile, or
// --executor, else eager); one usage line naming the valid columns otherwise, before anything runs.
void check_explain_column(const std::string& column, const std::vector<Configuration>& configurations);

// --launcher, with what Slurm needs (its programs on PATH, --slurm-args split as a shell would).
Launcher chosen_launcher(const SweepCommandOptions& o, bool slurm_options_given);

// The sweep's own options, alone, before any file is read: the launcher, the format (and the
// file it needs), the range checks. `tokbench` calls it as soon as the line is read (a parse
// callback), run_sweep_command first; one usage line (exit 2) for the first that is wrong.
struct SweepChoices {
  Launcher launcher;
  const results::ReporterPlugin* format;
};
SweepChoices check_sweep_choices(const SweepCommandOptions& o, bool slurm_options_given);

}  // namespace tokbench::sweep
