// The Slurm launcher's pure parts: the batch script of a configuration (its shape, the options
// srun's ranks get, the time limit), reading scontrol's and sacct's answers, and the row of a
// job that ended without a result. The real scheduler is exercised by cli_sweep_slurm.py.
#include <gtest/gtest.h>
#include <fstream>
#include <filesystem>
#include <cstdio>
#include <algorithm>
#include <unistd.h>

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

// No option value can leave its quotes or its comment: values built to escape stay data. The
// script is run by bash itself, with srun replaced by a printer of its arguments: every value
// arrives whole, and no payload ran (its marker file does not exist).
TEST(SlurmJobs, ValuesBuiltToEscapeStayData) {
  const std::filesystem::path marker = std::filesystem::temp_directory_path() /
                                       ("tokbench-slurm-escape-" + std::to_string(::getpid()));
  const std::string touch = "touch " + marker.string();
  const std::vector<std::string> values = {"pythia-14m\n" + touch, "x'; " + touch + "; echo '$(" + touch + ")`" +
                                           touch + "`", "a\"b\\\"$(" + touch + ")"};
  const auto c = expand(matrix_from_arguments({"--model-name", values[0], "--data", values[1], "--data-dtype",
                                               values[2]})).at(0);
  std::string s = slurm_batch_script(c, "/tb", "/r.json", "/l.log", 10);
  const std::string exec = "exec srun '/tb' run";
  ASSERT_NE(s.find(exec), std::string::npos) << s;
  s.replace(s.find(exec), exec.size(), "exec printf '%s\\0'");
  const std::filesystem::path script = marker.string() + ".sh";
  {
    std::ofstream(script) << s;
  }
  FILE* pipe = ::popen(("bash " + script.string()).c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  std::string printed;
  char buffer[4096];
  for (std::size_t n; (n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0;) printed.append(buffer, n);
  ::pclose(pipe);
  std::filesystem::remove(script);
  EXPECT_FALSE(std::filesystem::exists(marker)) << "a value ran as a command:\n" << s;
  std::filesystem::remove(marker);
  std::vector<std::string> args;
  for (std::size_t at = 0, end; (end = printed.find('\0', at)) != std::string::npos; at = end + 1)
    args.push_back(printed.substr(at, end - at));
  for (const auto& v : values)
    EXPECT_NE(std::find(args.begin(), args.end(), v), args.end()) << "not passed whole: " << v << "\n" << s;
  // The comment line carries no line break of a value.
  EXPECT_NE(s.find("model-name=pythia-14m?touch"), std::string::npos) << s;
  EXPECT_THROW(slurm_batch_script(c, "/tb", "/r.json", "/out\nrm -rf ~/l.log", 10), std::invalid_argument);
}

TEST(SlurmJobs, SbatchGetsWordsNeverAShell) {
  EXPECT_EQ(sbatch_argv("--partition 'gpu a' --comment=\"x y\" -A\\ b", "/s/job.sbatch"),
            (std::vector<std::string>{"sbatch", "--parsable", "--partition", "gpu a", "--comment=x y", "-A b",
                                      "/s/job.sbatch"}));
  EXPECT_EQ(sbatch_argv("", "/s"), (std::vector<std::string>{"sbatch", "--parsable", "/s"}));
  // Inside single quotes everything is literal, as in a shell.
  EXPECT_EQ(sbatch_argv("--comment='$(x) `y` ; z'", "/s"),
            (std::vector<std::string>{"sbatch", "--parsable", "--comment=$(x) `y` ; z", "/s"}));
  for (const std::string bad : {"--comment=$(touch /tmp/pwned)", "--comment=`id`", "-p a; rm -rf ~", "-p a | b",
                                "-p a && b", "--x=$HOME", "-p a\n-p b", "--comment='unclosed"}) {
    try {
      sbatch_argv(bad, "/s");
      ADD_FAILURE() << "accepted: " << bad;
    } catch (const std::invalid_argument& e) {
      EXPECT_EQ(std::string(e.what()).rfind("--slurm-args: ", 0), 0u) << e.what();
      EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << e.what();
    }
  }
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
