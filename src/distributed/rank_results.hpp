// Each rank's own figures, gathered on rank 0 through the job's store rather than through a
// collective: a store read still answers when a peer has died, so rank 0 can report which
// rank is missing instead of hanging or crashing with it.
#pragma once

#include <torch/csrc/distributed/c10d/Store.hpp>

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace tokbench::dist {

struct RankRecord {
  int64_t rank = 0;
  std::string status = "ok";   // the rank's RunStatus text; "rank_failed" when it never reported
  std::string message;
  std::string host;
  int64_t measured_iters = 0;
  double window_seconds = 0;          // this rank's measured window
  double exposed_comm_seconds = 0;    // summed over measured iterations
  int64_t allocated_peak_bytes = 0;
  int64_t reserved_peak_bytes = 0;
  int64_t peak_rss_bytes = 0;
  std::string kernels;                // the step's kernel choice (TrainStep::kernel_note); "" when none
  bool reported = true;               // false: filled in by rank 0 for a rank that did not report
};

// Every rank publishes `mine`; rank 0 then waits up to `timeout` for each other rank and
// returns all records in rank order (other ranks return only their own).
std::vector<RankRecord> exchange_rank_records(c10d::Store& store, const RankRecord& mine, int64_t world_size,
                                              std::chrono::milliseconds timeout);

}  // namespace tokbench::dist
