// The c10d process groups of one rank: a TCPStore for rendezvous (rank 0 serves it), the
// world group, and for FSDP the shard group (ranks that split the parameters among
// themselves) and, with hybrid sharding, the replicate group (ranks holding the same shard).
// Gloo on the CPU, NCCL on CUDA. Every collective is bounded by the timeout.
#pragma once

#include <c10/core/Device.h>
#include <torch/csrc/distributed/c10d/Backend.hpp>
#include <torch/csrc/distributed/c10d/Store.hpp>

#include <chrono>
#include <cstdint>
#include <optional>

#include "machine/dist_env.hpp"
#include "distributed/dist_settings.hpp"

namespace tokbench::distributed {

struct GroupOptions {
  machine::DistEnv env;
  std::chrono::milliseconds timeout{std::chrono::minutes(30)};
  c10::Device device{c10::kCPU};
  // NCCL (CUDA only, one device per rank) or Gloo (CPU or CUDA tensors).
  CommBackend backend = CommBackend::gloo;
  // FSDP hybrid sharding: shard within consecutive groups of this many ranks, replicate
  // across them; unset: the shard group is the world.
  std::optional<int64_t> shard_group_size;
};

struct ProcessGroups {
  int64_t rank = 0, world_size = 1;
  c10::intrusive_ptr<c10d::Store> store;      // the job's store (results are gathered through it)
  c10::intrusive_ptr<c10d::Backend> world;
  c10::intrusive_ptr<c10d::Backend> shard;    // == world unless hybrid
  c10::intrusive_ptr<c10d::Backend> replicate;  // hybrid only; null otherwise
  int64_t shard_rank = 0, shard_size = 1;
};

ProcessGroups create_process_groups(const GroupOptions& options);

// The job's store alone: rank 0 serves it (unless torchrun's agent does), every rank is its
// client; bounded by `timeout`. create_process_groups starts with it.
c10::intrusive_ptr<c10d::Store> connect_job_store(const machine::DistEnv& env, std::chrono::milliseconds timeout);

// The NCCL backend (nccl_backend.cpp, compiled where the CUDA toolkit is; elsewhere it throws).
c10::intrusive_ptr<c10d::Backend> make_nccl_backend(const c10::intrusive_ptr<c10d::Store>& store, int rank,
                                                    int size, std::chrono::milliseconds timeout);

// Blocks until every collective queued so far on `backend` has finished: a 1-element
// all-reduce, waited for.
void barrier(c10d::Backend& backend, const c10::Device& device);

}  // namespace tokbench::distributed
