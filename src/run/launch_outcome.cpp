// The launcher's rules for the run's label (launch_outcome.hpp).
#include "run/launch_outcome.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "process/child_process.hpp"
#include "results/record_status.hpp"

namespace tokbench::run {

using train::RunStatus;

std::optional<RunStatus> reported_status_of_exit(int exit_code) {
  for (RunStatus s : {RunStatus::oom, RunStatus::nan, RunStatus::interrupted, RunStatus::timeout,
                      RunStatus::rank_failed, RunStatus::error})
    if (train::exit_code(s) == exit_code) return s;
  return std::nullopt;
}

bool lead_record_stands(const distributed::RankExit& lead) {
  if (lead.signal != 0) return false;
  if (lead.exit_code == results::kExitRecordNotWritten) return true;  // its report says why
  const std::optional<RunStatus> status = reported_status_of_exit(lead.exit_code);
  if (!status) return false;
  return !(lead.killed_by_launcher && *status == RunStatus::interrupted);
}

namespace {

// What one rank's exit says of it: the status its exit code reports; `interrupted` when the
// launcher ended it by a signal; `rank_failed` when something else did, or for a code outside
// the status table.
RunStatus status_of_exit(const distributed::RankExit& r) {
  if (r.signal != 0) return r.killed_by_launcher ? RunStatus::interrupted : RunStatus::rank_failed;
  if (r.exit_code == 0) return RunStatus::ok;
  return reported_status_of_exit(r.exit_code).value_or(RunStatus::rank_failed);
}

}  // namespace

RunStatus launcher_outcome(const distributed::LaunchResult& result) {
  if (result.interrupted) return RunStatus::interrupted;
  if (!result.first_failed_rank) return RunStatus::rank_failed;
  const auto failed = std::find_if(result.ranks.begin(), result.ranks.end(), [&](const distributed::RankExit& r) {
    return r.rank == *result.first_failed_rank;
  });
  // The first failed rank was not the launcher's to end, so a signal there is rank_failed.
  return failed == result.ranks.end() ? RunStatus::rank_failed : status_of_exit(*failed);
}

std::vector<LaunchedRankEnding> launched_rank_endings(const distributed::LaunchResult& result) {
  std::vector<LaunchedRankEnding> endings;
  for (const distributed::RankExit& r : result.ranks) {
    LaunchedRankEnding e;
    e.rank = r.rank;
    e.status = status_of_exit(r);
    const process::ExitStatus how{r.exit_code, r.signal};
    std::string why;
    if (r.killed_by_launcher)
      why = result.interrupted || !result.first_failed_rank
                ? " (the launcher ended it when interrupted)"
                : fmt::format(" (the launcher ended it after rank {} failed)", *result.first_failed_rank);
    e.message = fmt::format("{} after {:.1f} s{}", how.describe(), r.seconds, why);
    endings.push_back(std::move(e));
  }
  return endings;
}

}  // namespace tokbench::run
