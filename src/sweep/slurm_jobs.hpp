// `tokbench sweep --launcher slurm`: each configuration is one Slurm batch job whose ranks are
// srun tasks (`tokbench run` reads SLURM_PROCID, SLURM_NTASKS, ... and takes the first node of
// the job as rank 0's store). The job writes OUT/runs/<id>.json itself, as a local run does;
// the sweep submits at most --slurm-max-jobs jobs at once, asks Slurm for their states, and
// makes a row of every job that ended without a result (timeout, out of memory, cancelled,
// failed). Job ids are kept in OUT/slurm-jobs.json, so a sweep started again waits for its
// earlier jobs instead of submitting them twice. Torch-free; the Slurm commands (sbatch,
// scontrol, sacct, scancel) are run as programs from PATH.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "sweep/matrix.hpp"
#include "sweep/sweep_runner.hpp"

namespace tokbench::sweep {

// The run options a job passes to `tokbench run`: the configuration's, less the built-in
// launcher's (--nproc-per-node, --nnodes, --node-rank, --master-addr, --master-port), whose
// work Slurm does.
std::vector<std::string> slurm_run_arguments(const Configuration& config);

// The job's shape, from the configuration's launcher options (1 when absent).
int64_t slurm_nodes(const Configuration& config);
int64_t slurm_tasks_per_node(const Configuration& config);

// The batch script of one configuration: #SBATCH lines (name, nodes, tasks per node, CPUs per
// task from --num-threads, GPUs per node when --device is CUDA, the time limit from the
// per-run timeout, the log) and one `srun tokbench run ...` writing `result`.
// Every value in it is quoted for bash (single quotes), and comment text loses its control
// characters, so no option value can become a command; a log path sbatch could not read (a
// line break in it) is refused with std::invalid_argument.
std::string slurm_batch_script(const Configuration& config, const std::filesystem::path& tokbench,
                               const std::filesystem::path& result, const std::filesystem::path& log,
                               double timeout_seconds);

// sbatch's argv for a batch script: --parsable, the words of --slurm-args (split as a shell
// splits them, expanding nothing: shell_words.hpp), the script. No shell runs it.
std::vector<std::string> sbatch_argv(const std::string& sbatch_arguments, const std::filesystem::path& script);

// --time for sbatch: whole minutes, rounded up (Slurm's limits are in minutes).
int64_t slurm_time_limit_minutes(double timeout_seconds);

// A job's state as Slurm reports it ("RUNNING", "TIMEOUT", ...; "UNKNOWN" when Slurm no
// longer knows the job) and its exit code "E:S" split.
struct SlurmJobState {
  std::string state = "UNKNOWN";
  int exit_code = 0;
  int signal = 0;
};

// `scontrol show job -o ID` (JobState=, ExitCode=) and `sacct -P -n -X -o State,ExitCode`
// ("CANCELLED by 0|0:15") lines; nullopt-like UNKNOWN when neither field is there.
SlurmJobState parse_scontrol_job(const std::string& line);
SlurmJobState parse_sacct_job(const std::string& line);

// Whether the job has ended (COMPLETED, FAILED, CANCELLED, TIMEOUT, OUT_OF_MEMORY,
// NODE_FAIL, PREEMPTED, BOOT_FAIL, DEADLINE, or UNKNOWN); every other state is still queued
// or running.
bool slurm_job_ended(const std::string& state);

// The row of a job that ended without its own finished result: status and message from
// Slurm's state, the exit code and the last line of the job's log.
struct JobEnding {
  std::string status;
  std::string message;
};
JobEnding slurm_job_ending(const SlurmJobState& job, int64_t job_id, const std::string& last_log_line,
                           double timeout_seconds);

// The sweep loop over Slurm jobs (run_sweep calls it for Launcher::slurm).
SweepResult run_slurm_sweep(const std::vector<Configuration>& configs, const SweepOptions& options);

}  // namespace tokbench::sweep
