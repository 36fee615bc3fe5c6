// One rank's own ending and figures, as rank 0 gathers them to report the job (slowest
// rank's window, largest peaks, the status that explains the ending, every rank listed).
// A plain record with a JSON form, torch-free: the C++ steps and the Python executors'
// ranks fill in the same one.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json_fwd.hpp>

#include "train/memory_breakdown.hpp"
#include "train/profiled_time_account.hpp"

namespace tokbench::distributed {

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
  std::optional<train::MemoryBreakdown> memory_breakdown;  // none where the executor cannot see it
  // The time account's profiled pass on this rank, as measured (rank 0 makes every rank's
  // account from it: docs/time-account.md); none when not run, failed, or the executor has none.
  std::optional<train::ProfiledTimeAccount> time_account;
  // Why a time account asked for is missing on this rank (its pass failed or was stopped); ""
  // when it is there or was not asked for. Rank 0 prints it after the report.
  std::string time_account_message;
  bool reported = true;               // false: filled in by rank 0 for a rank that did not report
};

nlohmann::json to_json(const RankRecord& record);
RankRecord rank_record_from_json(const nlohmann::json& j);  // throws nlohmann::json::exception on a bad document

// What rank 0 records for a rank whose record did not arrive in time.
RankRecord missing_rank_record(int64_t rank);

}  // namespace tokbench::distributed
