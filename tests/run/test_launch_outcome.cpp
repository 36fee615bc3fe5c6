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

// The case behind the per-rank lines: rank 1 ran out of memory, the launcher had to SIGKILL
// rank 0 before it could write anything, and the launcher's record still lists both ranks.
TEST(LaunchOutcome, TheLaunchersRecordListsEveryRankWithWhatItsExitSaid) {
  distributed::LaunchResult result;
  result.ranks = {ended(0, 0, 9, /*killed_by_launcher=*/true), ended(1, train::exit_code(RunStatus::oom))};
  result.ranks[1].seconds = 1.94;
  result.first_failed_rank = 1;
  auto endings = launched_rank_endings(result);
  ASSERT_EQ(endings.size(), 2u);
  EXPECT_EQ(endings[0].rank, 0);
  EXPECT_EQ(endings[0].status, RunStatus::interrupted);
  EXPECT_EQ(endings[0].message, "was killed by signal 9 (SIGKILL) after 0.0 s (the launcher ended it after rank 1 failed)");
  EXPECT_EQ(endings[1].status, RunStatus::oom);
  EXPECT_EQ(endings[1].message, "exited with code 3 after 1.9 s");

  result.ranks = {ended(0, 0), ended(1, 0, 9), ended(2, train::kExitUsage), ended(3, 0, 15, true)};
  result.first_failed_rank = 1;
  result.interrupted = true;
  endings = launched_rank_endings(result);
  ASSERT_EQ(endings.size(), 4u);
  EXPECT_EQ(endings[0].status, RunStatus::ok);
  EXPECT_EQ(endings[1].status, RunStatus::rank_failed) << "killed from outside";
  EXPECT_EQ(endings[2].status, RunStatus::rank_failed) << "a code outside the status table";
  EXPECT_EQ(endings[3].status, RunStatus::interrupted);
  EXPECT_NE(endings[3].message.find("when interrupted"), std::string::npos) << endings[3].message;
}

}  // namespace
}  // namespace tokbench::run
