// The launcher environments read by dist_env.cpp: torchrun, Slurm, Open MPI, and refusals.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <stdexcept>
#include <string>

#include "machine/dist_env.hpp"
#include "distributed/dist_settings.hpp"

namespace tokbench::distributed {
namespace {

machine::EnvLookup env_of(std::map<std::string, std::string> vars) {
  return [vars](const std::string& name) -> std::optional<std::string> {
    auto it = vars.find(name);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

TEST(DistEnv, NoLauncherIsOneProcess) {
  const machine::DistEnv d = machine::read_dist_env(env_of({}));
  EXPECT_EQ(d.source, "none");
  EXPECT_EQ(d.world_size, 1);
  EXPECT_EQ(d.rank, 0);
}

TEST(DistEnv, Torchrun) {
  const machine::DistEnv d = machine::read_dist_env(env_of({{"RANK", "5"}, {"WORLD_SIZE", "8"}, {"LOCAL_RANK", "1"},
                                          {"LOCAL_WORLD_SIZE", "4"}, {"MASTER_ADDR", "node7"},
                                          {"MASTER_PORT", "1234"}}));
  EXPECT_EQ(d.source, "torchrun");
  EXPECT_EQ(d.world_size, 8);
  EXPECT_EQ(d.rank, 5);
  EXPECT_EQ(d.local_rank, 1);
  EXPECT_EQ(d.local_world_size, 4);
  EXPECT_EQ(d.master_addr, "node7");
  EXPECT_EQ(d.master_port, 1234);
  EXPECT_FALSE(d.use_agent_store);
}

TEST(DistEnv, TorchrunAgentStoreIsJoinedAsAClient) {
  const machine::DistEnv d = machine::read_dist_env(env_of({{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"TORCHELASTIC_USE_AGENT_STORE", "True"},
                                          {"TORCHELASTIC_RESTART_COUNT", "1"}}));
  EXPECT_TRUE(d.use_agent_store);
  EXPECT_EQ(d.agent_store_prefix, "/worker/attempt_1");
}

TEST(DistEnv, SlurmTakesTheFirstNodeAsMaster) {
  const machine::DistEnv d = machine::read_dist_env(env_of({{"SLURM_PROCID", "3"}, {"SLURM_NTASKS", "4"}, {"SLURM_LOCALID", "1"},
                                          {"SLURM_TASKS_PER_NODE", "2(x2)"},
                                          {"SLURM_JOB_NODELIST", "gpu[003-004],cpu1"}}));
  EXPECT_EQ(d.source, "slurm");
  EXPECT_EQ(d.rank, 3);
  EXPECT_EQ(d.world_size, 4);
  EXPECT_EQ(d.local_rank, 1);
  EXPECT_EQ(d.local_world_size, 2);
  EXPECT_EQ(d.master_addr, "gpu003");
  EXPECT_EQ(d.master_port, 29500);
  EXPECT_FALSE(d.gpus_bound_per_task);
  EXPECT_TRUE(machine::read_dist_env(env_of({{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "2"}, {"SLURM_GPUS_PER_TASK", "1"}}))
                  .gpus_bound_per_task);
}

TEST(DistEnv, SlurmNodeLists) {
  EXPECT_EQ(machine::first_slurm_host("node1"), "node1");
  EXPECT_EQ(machine::first_slurm_host("node1,node2"), "node1");
  EXPECT_EQ(machine::first_slurm_host("gpu[7,9-12]"), "gpu7");
  EXPECT_EQ(machine::first_slurm_host("a1,gpu[7-8]"), "a1");
  // A suffix after the bracket belongs to the host (this Slurm's scontrol rejects the list).
  EXPECT_EQ(machine::first_slurm_host("gpu[1-2]-ib"), "gpu1-ib");
  EXPECT_EQ(machine::first_slurm_host("gpu[1-2]-ib,cpu[3,5]"), "gpu1-ib");
}

// The first line of `scontrol show hostnames LIST`, run with the SLURM_CONF of the environment.
std::string scontrol_first_host(const std::string& list) {
  const std::string command = "scontrol show hostnames '" + list + "' 2>/dev/null";
  std::FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return "";
  char line[512] = {};
  const bool got = std::fgets(line, sizeof line, pipe) != nullptr;
  ::pclose(pipe);
  std::string host = got ? line : "";
  if (!host.empty() && host.back() == '\n') host.pop_back();
  return host;
}

// Slurm's own expansion on the Slurm the tests install (scripts/bootstrap installs
// slurm-client): bracketed, suffixed, comma and zero-padded lists, each against the parser
// and against slurm_master_host (which asks scontrol first, and falls back to the parser
// for a list this scontrol rejects).
TEST(DistEnv, SlurmNodeListsAgreeWithScontrol) {
  const std::string dir = ::testing::TempDir() + "/tokbench_slurm_conf";
  std::filesystem::create_directories(dir);
  {
    std::ofstream conf(dir + "/slurm.conf");
    conf << "ClusterName=tokbench-test\nSlurmctldHost=localhost\nNodeName=localhost CPUs=1 State=UNKNOWN\n"
            "PartitionName=test Nodes=localhost Default=YES\n";
  }
  ::setenv("SLURM_CONF", (dir + "/slurm.conf").c_str(), 1);
  for (const std::string list : {"node1", "node1,node2", "gpu[7,9-12]", "a1,gpu[7-8]", "gpu[003-005,9],cpu1",
                                 "n[1-2]-ib[3-4]", "node-[01-02]", "r[1-2]n[07,9]", "gpu[10-11],gpu[2-3]"}) {
    const std::string slurms = scontrol_first_host(list);
    ASSERT_NE(slurms, "") << "scontrol show hostnames did not expand " << list << " (is slurm-client installed?)";
    EXPECT_EQ(machine::first_slurm_host(list), slurms) << list;
    EXPECT_EQ(machine::slurm_master_host(list), slurms) << list;
  }
  EXPECT_EQ(scontrol_first_host("gpu[1-2]-ib"), "");  // rejected by this Slurm ...
  EXPECT_EQ(machine::slurm_master_host("gpu[1-2]-ib"), "gpu1-ib");  // ... so the parser answers
  ::unsetenv("SLURM_CONF");
}

TEST(DistEnv, OpenMpi) {
  const machine::DistEnv d = machine::read_dist_env(env_of({{"OMPI_COMM_WORLD_RANK", "1"}, {"OMPI_COMM_WORLD_SIZE", "2"},
                                          {"OMPI_COMM_WORLD_LOCAL_RANK", "1"},
                                          {"OMPI_COMM_WORLD_LOCAL_SIZE", "2"}, {"MASTER_ADDR", "10.0.0.1"}}));
  EXPECT_EQ(d.source, "mpi");
  EXPECT_EQ(d.rank, 1);
  EXPECT_EQ(d.world_size, 2);
  EXPECT_EQ(d.master_addr, "10.0.0.1");
}

void expect_refused(std::map<std::string, std::string> vars, const std::string& needle) {
  try {
    machine::read_dist_env(env_of(std::move(vars)));
    FAIL() << "accepted";
  } catch (const std::invalid_argument& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find(needle), std::string::npos) << what;
    EXPECT_EQ(what.find('\n'), std::string::npos) << what;
  }
}

TEST(DistEnv, BadValuesAreRefusedWithTheirName) {
  expect_refused({{"WORLD_SIZE", "two"}}, "WORLD_SIZE 'two'");
  expect_refused({{"WORLD_SIZE", "0"}}, "WORLD_SIZE '0'");
  expect_refused({{"WORLD_SIZE", "99999999999999999999"}}, "WORLD_SIZE");
  expect_refused({{"WORLD_SIZE", "2"}, {"RANK", "2"}}, "RANK '2'");
  expect_refused({{"WORLD_SIZE", "2"}, {"RANK", "-1"}}, "RANK '-1'");
  expect_refused({{"WORLD_SIZE", "2"}, {"RANK", "0"}, {"MASTER_PORT", "70000"}}, "MASTER_PORT");
  expect_refused({{"SLURM_PROCID", "4"}, {"SLURM_NTASKS", "4"}}, "SLURM_PROCID '4'");
}

TEST(DistSettings, ReferenceLabels) {
  DistributedSettings s;
  s.env.world_size = 4;
  EXPECT_EQ(distributed_mode_label(s), "none");
  s.mode = DistMode::ddp;
  EXPECT_EQ(distributed_mode_label(s), "ddp");
  s.mode = DistMode::fsdp;
  s.shard_mode = ShardMode::zero2;
  s.units = UnitPolicy::whole_model;
  EXPECT_EQ(distributed_mode_label(s), "fsdp_zero2_none_bucketing");
  s.shard_mode = ShardMode::zero3;
  s.units = UnitPolicy::per_block;
  s.shard_group_size = 2;
  EXPECT_EQ(distributed_mode_label(s), "fsdp_hybrid_zero3_block_bucketing");
  s.shard_group_size = 4;  // a shard group as large as the world is plain FSDP
  EXPECT_EQ(distributed_mode_label(s), "fsdp_zero3_block_bucketing");
}

}  // namespace
}  // namespace tokbench::distributed
