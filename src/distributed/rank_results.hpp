// Each rank's record (rank_record.hpp), gathered on rank 0 through the job's store rather
// than through a collective: a store read still answers when a peer has died, so rank 0 can
// report which rank is missing instead of hanging or crashing with it.
#pragma once

#include <torch/csrc/distributed/c10d/Store.hpp>

#include <chrono>
#include <cstdint>
#include <vector>

#include "distributed/rank_record.hpp"

namespace tokbench::distributed {

// Every rank publishes `mine`; rank 0 then waits for the others, `timeout` in all (not per
// rank: a job with many dead ranks still ends one timeout after the first wait), and returns
// all records in rank order, a missing_rank_record for each rank that did not publish in
// time. Other ranks return only their own.
std::vector<RankRecord> exchange_rank_records(c10d::Store& store, const RankRecord& mine, int64_t world_size,
                                              std::chrono::milliseconds timeout);

}  // namespace tokbench::distributed
