// The job's store for ranks whose training runs in a child process (the Python executors):
// this rank process joins the job's rendezvous as tokbench's C++ steps do (rank 0 serves the
// store unless torchrun's agent does), hands its child the address to reach the same store,
// and after the child ends exchanges its rank record through it. Torch-free interface, so the
// executor that uses it stays free of LibTorch headers.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "machine/dist_env.hpp"
#include "distributed/rank_record.hpp"

namespace tokbench::distributed {

// How a child reaches the store: a TCPStore client of host:port, its keys nested under each
// prefix in turn (outermost first), as c10d's PrefixStore nests them.
struct StoreAddress {
  std::string host;
  int port = 0;
  std::vector<std::string> prefixes;
};

class JobStore {
 public:
  // Connects (rank 0: serves) within `timeout`; throws on failure, naming the address.
  JobStore(const machine::DistEnv& env, std::chrono::milliseconds timeout);
  ~JobStore();
  JobStore(const JobStore&) = delete;
  JobStore& operator=(const JobStore&) = delete;

  // The address under which a child keeps its keys apart from tokbench's own (`space`).
  StoreAddress child_address(const std::string& space) const;

  // exchange_rank_records (rank_results.hpp) on this store.
  std::vector<RankRecord> exchange(const RankRecord& mine, int64_t world_size, std::chrono::milliseconds timeout);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tokbench::distributed
