// What the built-in launcher makes of how its ranks ended (launch_benchmark.cpp): whether rank
// 0's own record stands, and, when it does not, how the launcher labels the run. Torch-free, so
// the rules test without starting a rank.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "distributed/launcher.hpp"
#include "train/run_status.hpp"

namespace tokbench::run {

// The status a rank's exit code reports (the status table), for the codes by which a rank says
// it reported its own ending; nothing for a usage error, a lost record or any other code.
std::optional<train::RunStatus> reported_status_of_exit(int exit_code);

// Rank 0 wrote the job's record and it stands: it exited (no signal) with a code of the status
// table or the lost-record code. It may have done so after the launcher's SIGTERM, when the
// failure grace ran out while it was still gathering a failed peer's record; a rank that the
// SIGTERM itself ended reports `interrupted`, which says nothing about the failure, so that one
// record does not stand.
bool lead_record_stands(const distributed::RankExit& lead);

// The label of the record the launcher writes when rank 0's does not stand: interrupted when
// the launcher was; else the first failed rank's own status when it reported one (an OOM on
// rank 1 is `oom`, however rank 0 then ended); else rank_failed.
train::RunStatus launcher_outcome(const distributed::LaunchResult& result);

// One local rank's ending as the launcher saw it, for the record it writes when rank 0's does
// not stand: the record still lists every rank (a rank 0 that the launcher had to SIGKILL
// wrote nothing), each with the status its exit code reported.
struct LaunchedRankEnding {
  int rank = 0;
  train::RunStatus status = train::RunStatus::ok;
  std::string message;  // "exited with code 3 after 1.9 s"
};

// In rank order: a rank that exited with a status-table code has that status; one the
// launcher ended by a signal is `interrupted` (it was ended, it did not fail); one killed from
// outside, or that exited with any other non-zero code, is `rank_failed`; exit 0 is `ok`.
std::vector<LaunchedRankEnding> launched_rank_endings(const distributed::LaunchResult& result);

}  // namespace tokbench::run
