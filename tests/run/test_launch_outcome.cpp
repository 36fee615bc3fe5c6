// How the launcher reads its ranks' ends (run/launch_outcome.hpp). The case behind these rules:
// rank 1 ran out of memory; rank 0, mid-iteration on a loaded machine, was still finding out
// when the failure grace ran out, took the launcher's SIGTERM, gathered rank 1's record and
// exited 3 with a record saying `oom` on rank 1. That record stands; the launcher must not write
// `rank_failed` over it.
#include <gtest/gtest.h>

#include "results/record_status.hpp"
#include "run/launch_outcome.hpp"

namespace tokbench::run {
namespace {

using train::RunStatus;

distributed::RankExit ended(int rank, int code, int signal = 0, bool killed_by_launcher = false) {
  distributed::RankExit exit;
  exit.rank = rank;
  exit.exit_code = code;
  exit.signal = signal;
  exit.killed_by_launcher = killed_by_launcher;
  return exit;
}

TEST(LaunchOutcome, EveryStatusOfTheTableIsReadBackFromItsExitCode) {
  for (RunStatus s : {RunStatus::oom, RunStatus::nan, RunStatus::interrupted, RunStatus::timeout,
                      RunStatus::rank_failed, RunStatus::error})
    EXPECT_EQ(reported_status_of_exit(train::exit_code(s)), s) << train::to_string(s);
  EXPECT_FALSE(reported_status_of_exit(train::kExitOk));
  EXPECT_FALSE(reported_status_of_exit(train::kExitUsage));
  EXPECT_FALSE(reported_status_of_exit(results::kExitRecordNotWritten));
  EXPECT_FALSE(reported_status_of_exit(137));
}

TEST(LaunchOutcome, ALeadThatReportedAFailureAfterTheLaunchersSigtermStands) {
  EXPECT_TRUE(lead_record_stands(ended(0, train::exit_code(RunStatus::oom), 0, /*killed_by_launcher=*/true)));
  EXPECT_TRUE(lead_record_stands(ended(0, train::exit_code(RunStatus::rank_failed), 0, true)));
  EXPECT_TRUE(lead_record_stands(ended(0, train::exit_code(RunStatus::oom))));
  EXPECT_TRUE(lead_record_stands(ended(0, results::kExitRecordNotWritten)));
}

TEST(LaunchOutcome, ALeadEndedByTheSigtermItselfOrBySignalDoesNotStand) {
  EXPECT_FALSE(lead_record_stands(ended(0, train::exit_code(RunStatus::interrupted), 0, true)));
  EXPECT_FALSE(lead_record_stands(ended(0, 0, 15, true)));
  EXPECT_FALSE(lead_record_stands(ended(0, 0, 9)));
  EXPECT_FALSE(lead_record_stands(ended(0, train::kExitUsage)));
  EXPECT_FALSE(lead_record_stands(ended(0, 0)));  // it finished; a peer failed afterwards
  // A Ctrl-C the lead took itself is its own, true, report.
  EXPECT_TRUE(lead_record_stands(ended(0, train::exit_code(RunStatus::interrupted))));
}

TEST(LaunchOutcome, TheLauncherLabelsTheRunByTheFirstFailedRanksOwnStatus) {
  distributed::LaunchResult result;
  result.ranks = {ended(0, 0, 9, true), ended(1, train::exit_code(RunStatus::oom))};
  result.first_failed_rank = 1;
  EXPECT_EQ(launcher_outcome(result), RunStatus::oom);

  result.ranks[1] = ended(1, 0, 9);  // killed from outside
  EXPECT_EQ(launcher_outcome(result), RunStatus::rank_failed);
  result.ranks[1] = ended(1, train::kExitUsage);
  EXPECT_EQ(launcher_outcome(result), RunStatus::rank_failed);
  result.ranks[1] = ended(1, train::exit_code(RunStatus::nan));
  EXPECT_EQ(launcher_outcome(result), RunStatus::nan);

  result.interrupted = true;
  EXPECT_EQ(launcher_outcome(result), RunStatus::interrupted);
  result.interrupted = false;
  result.first_failed_rank.reset();
  EXPECT_EQ(launcher_outcome(result), RunStatus::rank_failed);
}

}  // namespace
}  // namespace tokbench::run
