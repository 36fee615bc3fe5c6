// The Slurm launcher's pure parts: the batch script of a configuration (its shape, the options
// srun's ranks get, the time limit), reading scontrol's and sacct's answers, and the row of a
// job that ended without a result. The real scheduler is exercised by cli_sweep_slurm.py.
#include <gtest/gtest.h>

#include "sweep/slurm_jobs.hpp"

namespace tokbench::sweep {
namespace {

Configuration two_ranks_on_cuda() {
  const auto configs = expand(matrix_from_arguments({"--model-name", "pythia-14m", "--nproc-per-node", "4",
                                                     "--nnodes", "2", "--master-port", "0", "--device", "cuda",
                                                     "--num-threads", "3", "--distributed-mode", "fsdp"}));
  return configs.at(0);
}

bool has_line(const std::string& text, const std::string& line) {
  return text.find("\n" + line + "\n") != std::string::npos;
}

TEST(SlurmJobs, BatchScriptSizesTheJobFromTheConfiguration) {
  const Configuration c = two_ranks_on_cuda();
  const std::string s = slurm_batch_script(c, "/opt/tb/tokbench", "/out/runs/x.json", "/out/logs/x.log", 3601);
  EXPECT_TRUE(has_line(s, "#SBATCH --job-name=tokbench-" + c.id)) << s;
  EXPECT_TRUE(has_line(s, "#SBATCH --nodes=2")) << s;
  EXPECT_TRUE(has_line(s, "#SBATCH --ntasks-per-node=4")) << s;
  EXPECT_TRUE(has_line(s, "#SBATCH --gpus-per-node=4")) << s;
  EXPECT_TRUE(has_line(s, "#SBATCH --cpus-per-task=3")) << s;
  EXPECT_TRUE(has_line(s, "#SBATCH --time=61")) << s;  // 3601 s rounded up to minutes
  EXPECT_TRUE(has_line(s, "#SBATCH --output=/out/logs/x.log")) << s;
  EXPECT_TRUE(has_line(s, "exec srun '/opt/tb/tokbench' run '--model-name' 'pythia-14m' '--device' 'cuda' "
                          "'--num-threads' '3' '--distributed-mode' 'fsdp' --json-path '/out/runs/x.json' --quiet"))
      << s;
  // The built-in launcher's flags stay out: srun starts the ranks. Port 0 means "any".
  EXPECT_EQ(s.find("--nproc-per-node"), std::string::npos);
  EXPECT_EQ(s.find("--master-port"), std::string::npos);
  EXPECT_TRUE(has_line(s, "export MASTER_PORT=$((20000 + SLURM_JOB_ID % 40000))")) << s;
}

TEST(SlurmJobs, CpuConfigurationAsksForNoGpuAndKeepsAFixedPort) {
  const auto c = expand(matrix_from_arguments({"--seq-len", "32", "--device", "cpu", "--master-port", "29512"})).at(0);
  const std::string s = slurm_batch_script(c, "/tb", "/r.json", "/l.log", 10);
  EXPECT_EQ(s.find("--gpus-per-node"), std::string::npos);
  EXPECT_TRUE(has_line(s, "#SBATCH --nodes=1")) << s;
  EXPECT_TRUE(has_line(s, "#SBATCH --ntasks-per-node=1")) << s;
  EXPECT_TRUE(has_line(s, "#SBATCH --time=1")) << s;
  EXPECT_TRUE(has_line(s, "export MASTER_PORT='29512'")) << s;
}

TEST(SlurmJobs, ReadsScontrolAndSacct) {
  const auto running = parse_scontrol_job("JobId=7 JobName=x UserId=root(0) JobState=RUNNING Reason=None "
                                          "Dependency=(null) ExitCode=0:0 RunTime=00:00:03\n");
  EXPECT_EQ(running.state, "RUNNING");
  EXPECT_FALSE(slurm_job_ended(running.state));
  const auto failed = parse_scontrol_job("JobId=8 JobState=FAILED Reason=NonZeroExitCode ExitCode=2:0 DerivedExitCode=0:0");
  EXPECT_EQ(failed.state, "FAILED");
  EXPECT_EQ(failed.exit_code, 2);
  EXPECT_TRUE(slurm_job_ended(failed.state));
  const auto cancelled = parse_sacct_job("CANCELLED by 0|0:15\n");
  EXPECT_EQ(cancelled.state, "CANCELLED");
  EXPECT_EQ(cancelled.signal, 15);
  EXPECT_EQ(parse_sacct_job("").state, "UNKNOWN");
  EXPECT_EQ(parse_scontrol_job("slurm_load_jobs error: Invalid job id specified").state, "UNKNOWN");
  EXPECT_TRUE(slurm_job_ended("UNKNOWN"));
  EXPECT_FALSE(slurm_job_ended("PENDING"));
  EXPECT_FALSE(slurm_job_ended("COMPLETING"));
}

TEST(SlurmJobs, EndingsWithoutAResultNameSlurmsState) {
  EXPECT_EQ(slurm_job_ending({"TIMEOUT", 0, 15}, 5, "", 120).status, "timeout");
  EXPECT_EQ(slurm_job_ending({"OUT_OF_MEMORY", 0, 9}, 5, "", 120).status, "oom");
  const JobEnding refused = slurm_job_ending({"FAILED", 2, 0}, 5, "tokbench: --device 'cuda' cannot run here", 120);
  EXPECT_EQ(refused.status, "invalid");
  EXPECT_EQ(refused.message, "tokbench: --device 'cuda' cannot run here");
  const JobEnding node = slurm_job_ending({"NODE_FAIL", 0, 0}, 12, "last words", 120);
  EXPECT_EQ(node.status, "error");
  EXPECT_EQ(node.message, "Slurm job 12 ended NODE_FAIL (exit code 0:0) without a result: last words");
  EXPECT_EQ(slurm_job_ending({"CANCELLED", 0, 15}, 3, "", 120).status, "error");
}

}  // namespace
}  // namespace tokbench::sweep
