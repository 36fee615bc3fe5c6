// Where this process sits in a distributed job, read from the environment the launcher set:
// torchrun's (RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT),
// Slurm's srun (SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID, the first host of
// SLURM_JOB_NODELIST as master) or Open MPI's mpirun (OMPI_COMM_WORLD_*). Torch-free, so
// validation can read it before any LibTorch work, and tests can hand it any environment.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

namespace tokbench::machine {

struct DistEnv {
  std::string source = "none";  // "tokbench" (its launcher), "torchrun", "slurm", "mpi" or "none"
  int64_t world_size = 1;
  int64_t rank = 0;
  int64_t local_rank = 0;
  int64_t local_world_size = 1;
  std::string master_addr = "127.0.0.1";
  int master_port = 29500;  // torchrun's default
  // torchrun's agent already serves a store on MASTER_PORT (TORCHELASTIC_USE_AGENT_STORE):
  // every rank is then its client, under this key prefix (one per restart attempt).
  bool use_agent_store = false;
  std::string agent_store_prefix;
  // tokbench's launcher, rank 0 only: a socket already listening on master_port, inherited
  // (TOKBENCH_STORE_LISTEN_FD), that the store serves on; -1: the store binds the port itself.
  // Why: a port found free and closed again can be taken by another process before rank 0
  // binds it; a socket that never stops listening cannot.
  int store_listen_fd = -1;
  // Slurm bound GPUs to each task (srun --gpus-per-task, which implies --gpu-bind=per_task:N;
  // SLURM_GPUS_PER_TASK): each task sees only its own GPUs, numbered from 0.
  bool gpus_bound_per_task = false;
};

// Looks a variable up; nullopt when unset. Tests pass a map; programs pass getenv.
using EnvLookup = std::function<std::optional<std::string>(const std::string& name)>;
EnvLookup process_environment();

// Throws std::invalid_argument with one line naming the variable, its value and what is
// valid (a rank outside the world, a non-numeric size, a port out of range, ...).
DistEnv read_dist_env(const EnvLookup& lookup);

// The first host of a Slurm node list by tokbench's own parser: "gpu[003-005,9],cpu1" ->
// "gpu003", "gpu[1-2]-ib" -> "gpu1-ib".
std::string first_slurm_host(const std::string& node_list);

// The master host of a Slurm job: the first line of `scontrol show hostnames LIST` where
// scontrol runs, else first_slurm_host. (Slurm jobs are read with it; MASTER_ADDR, when
// set, wins.)
std::string slurm_master_host(const std::string& node_list);

}  // namespace tokbench::machine
