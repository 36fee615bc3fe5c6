// Gathering and merging the ranks' records (rank_gathering.hpp).
#include "run/rank_gathering.hpp"

#include <unistd.h>

#include <algorithm>
#include <iostream>
#include <utility>

#include "results/record_status.hpp"
#include "train/run_status.hpp"

namespace tokbench::run {
namespace {

// Which rank's ending explains the run: a rank's own failure (OOM, NaN, error) outranks the
// broken connections and timeouts it caused on the others.
int severity(const std::string& status) {
  using train::RunStatus;
  constexpr std::pair<RunStatus, int> kSeverity[] = {{RunStatus::oom, 7},     {RunStatus::nan, 6},
                                                     {RunStatus::error, 5},   {RunStatus::interrupted, 4},
                                                     {RunStatus::timeout, 3}, {RunStatus::rank_failed, 2},
                                                     {RunStatus::ok, 0}};
  for (const auto& [named, rank] : kSeverity)
    if (status == train::to_string(named)) return rank;
  return 1;
}

std::string host_name() {
  char name[256] = {};
  ::gethostname(name, sizeof name - 1);
  return name;
}

}  // namespace

distributed::RankRecord rank_record_of(const RunPlan& plan, const MeasuredRun& run) {
  distributed::RankRecord mine;
  mine.rank = plan.dist.env.rank;
  mine.status = to_string(run.outcome);
  mine.message = run.message;
  mine.host = host_name();
  for (const auto& it : run.iterations) mine.measured_iters += it.warmup ? 0 : 1;
  mine.window_seconds = run.measured_window_seconds;
  mine.exposed_comm_seconds = run.exposed_comm_seconds;
  mine.allocated_peak_bytes = run.allocated_peak_bytes;
  mine.reserved_peak_bytes = run.reserved_peak_bytes;
  mine.peak_rss_bytes = run.peak_rss_bytes;
  mine.kernels = run.kernel_note;
  mine.memory_breakdown = run.memory_breakdown;
  mine.time_account = run.time_account;
  mine.time_account_message = run.time_account_message;
  return mine;
}

void merge_rank_records(const std::vector<distributed::RankRecord>& records, MeasuredRun& run) {
  const distributed::RankRecord* cause = nullptr;
  const distributed::RankRecord* missing = nullptr;
  for (const auto& r : records) {
    if (!r.reported && missing == nullptr) missing = &r;
    run.ranks.push_back(RankSummary{r.rank, r.status, r.message, r.host, r.measured_iters, r.window_seconds,
                                    r.exposed_comm_seconds, r.allocated_peak_bytes, r.reserved_peak_bytes,
                                    r.peak_rss_bytes, r.kernels, r.memory_breakdown, r.time_account,
                                    r.time_account_message, r.reported});
    // The breakdown of the rank whose peak is reported (the first of equals).
    if (r.allocated_peak_bytes > run.allocated_peak_bytes || &r == &records.front())
      run.memory_breakdown = r.memory_breakdown;
    // The account of the rank whose window is reported, the slowest (the first of equals): the
    // iteration is as slow as it, so its account adds up to the reported iteration.
    if (r.window_seconds > run.measured_window_seconds || &r == &records.front()) {
      run.time_account = r.time_account;
      run.time_account_rank = r.rank;
    }
    run.measured_window_seconds = std::max(run.measured_window_seconds, r.window_seconds);
    run.allocated_peak_bytes = std::max(run.allocated_peak_bytes, r.allocated_peak_bytes);
    run.reserved_peak_bytes = std::max(run.reserved_peak_bytes, r.reserved_peak_bytes);
    run.peak_rss_bytes = std::max(run.peak_rss_bytes, r.peak_rss_bytes);
    if (r.status != "ok" && (cause == nullptr || severity(r.status) > severity(cause->status))) cause = &r;
  }
  // A rank that never reported (killed, hung) explains the broken connections and timeouts
  // the others saw: keep what rank 0 observed, and name that rank.
  if (missing != nullptr && (run.outcome == Outcome::ok || run.outcome == Outcome::rank_failed ||
                             run.outcome == Outcome::timeout)) {
    if (run.outcome == Outcome::ok) run.outcome = Outcome::rank_failed;
    run.message = "rank " + std::to_string(missing->rank) + " reported no result (it died or stopped responding); " +
                  "rank 0 saw: " + (run.message.empty() ? "nothing" : run.message);
  } else if (cause != nullptr) {
    run.outcome = train::run_status_from_string(cause->status);
    run.message = "rank " + std::to_string(cause->rank) + ": " + cause->message;
  }
}

void gather_rank_results(const RunPlan& plan, MeasuredRun& run, const ExchangeRankRecords& exchange) {
  const auto timeout = std::chrono::milliseconds(static_cast<int64_t>(plan.dist.timeout_seconds * 1000));
  // Healthy peers publish right after the loop; after a failure, a dead peer never will.
  const auto wait = run.outcome == Outcome::ok ? timeout : std::min(timeout, std::chrono::milliseconds(2000));
  try {
    const auto records = exchange(rank_record_of(plan, run), wait);
    if (plan.dist.env.rank == 0) merge_rank_records(records, run);
  } catch (const std::exception& e) {  // the store itself is gone (rank 0 died)
    if (run.outcome == Outcome::ok) {
      run.outcome = Outcome::rank_failed;
      run.message = std::string(e.what()).substr(0, std::string(e.what()).find('\n'));
    }
  }
}

std::vector<std::string> time_account_messages(const MeasuredRun& run) {
  std::vector<std::string> lines;
  if (!run.time_account_message.empty()) lines.push_back(run.time_account_message);
  for (const RankSummary& r : run.ranks)
    if (r.rank != 0 && !r.time_account_message.empty())
      lines.push_back("rank " + std::to_string(r.rank) + ": " + r.time_account_message);
  return lines;
}

int end_of_other_rank(const RunPlan& plan, const MeasuredRun& run) {
  if (run.outcome != Outcome::ok)
    std::cerr << "tokbench: rank " << plan.dist.env.rank << " ended with status " << to_string(run.outcome)
              << (run.message.empty() ? "" : ": " + run.message) << "\n";
  return run.output_failed ? results::kExitRecordNotWritten : exit_code(run.outcome);
}

}  // namespace tokbench::run
