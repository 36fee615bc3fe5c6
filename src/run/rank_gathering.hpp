// The end of a multi-rank run, the same for every executor (tokbench's steps and the Python
// ones): each rank turns what it measured into a rank record, the records meet on rank 0
// (through the job's store, a callback here), and rank 0 merges them into the job's run by
// the metric contract: the slowest rank's window (and its time account), the largest peaks over
// ranks, the status
// that explains the ending, every rank's own figures listed. Torch-free.
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "run/metrics.hpp"
#include "run/run_plan.hpp"
#include "distributed/rank_record.hpp"

namespace tokbench::run {

// Publishes `mine` and, on rank 0, returns every rank's record in rank order (a missing
// record for a rank that did not publish within `timeout`); elsewhere only `mine`. Throws
// when the store itself is gone.
using ExchangeRankRecords =
    std::function<std::vector<distributed::RankRecord>(const distributed::RankRecord& mine, std::chrono::milliseconds timeout)>;

// This rank's record of `run`.
distributed::RankRecord rank_record_of(const RunPlan& plan, const MeasuredRun& run);

// Rank 0's view of the job, merged into `run` (which holds rank 0's own figures).
void merge_rank_records(const std::vector<distributed::RankRecord>& records, MeasuredRun& run);

// Exchanges this rank's record and, on rank 0, merges every rank's into `run`. A healthy rank
// waits up to the distributed timeout for its peers; after a failure only briefly (a dead
// peer never publishes). A store that is gone turns an ok run into rank_failed.
void gather_rank_results(const RunPlan& plan, MeasuredRun& run, const ExchangeRankRecords& exchange);

// A rank other than 0 ends here: it says how it ended when that was not ok (rank 0 reports
// the job) and returns its exit code.
// The lines saying why time accounts asked for are missing, to print after the report: this
// process's (rank 0's) as it was, then each other rank's, prefixed by its rank.
std::vector<std::string> time_account_messages(const MeasuredRun& run);

int end_of_other_rank(const RunPlan& plan, const MeasuredRun& run);

}  // namespace tokbench::run
