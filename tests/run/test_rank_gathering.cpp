// Why a rank has no time account travels with its rank record to rank 0, which prints it after
// the report (run/rank_gathering.hpp): rank 0's own line as it was, then each other rank's,
// named by its rank.
#include <gtest/gtest.h>

#include "distributed/rank_record.hpp"
#include "run/rank_gathering.hpp"

namespace tokbench::run {
namespace {

distributed::RankRecord record(int64_t rank, std::string why) {
  distributed::RankRecord r;
  r.rank = rank;
  r.window_seconds = 1.0;
  r.measured_iters = 2;
  r.time_account_message = std::move(why);
  return r;
}

TEST(RankGathering, AMissingAccountsReasonTravelsWithItsRank) {
  const auto sent = record(1, "no time account: the profiled pass failed: RuntimeError: boom");
  const auto arrived = distributed::rank_record_from_json(distributed::to_json(sent));
  EXPECT_EQ(arrived.time_account_message, sent.time_account_message);

  MeasuredRun run;
  run.time_account_message = "no time account: the profiled pass was stopped";  // rank 0's own
  merge_rank_records({record(0, run.time_account_message), arrived, record(2, "")}, run);
  ASSERT_EQ(run.ranks.size(), 3u);
  EXPECT_EQ(run.ranks[1].time_account_message, sent.time_account_message);
  EXPECT_TRUE(run.ranks[1].reported);
  const std::vector<std::string> lines = time_account_messages(run);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0], "no time account: the profiled pass was stopped");
  EXPECT_EQ(lines[1], "rank 1: no time account: the profiled pass failed: RuntimeError: boom");
}

// A rank that never reported is listed as such, so that the record says null for its memory.
TEST(RankGathering, AMissingRankIsMarkedUnreported) {
  MeasuredRun run;
  merge_rank_records({record(0, ""), distributed::missing_rank_record(1)}, run);
  ASSERT_EQ(run.ranks.size(), 2u);
  EXPECT_TRUE(run.ranks[0].reported);
  EXPECT_FALSE(run.ranks[1].reported);
  EXPECT_EQ(run.outcome, Outcome::rank_failed);
}

// A CUDA rank's pass travels with its device timeline's figures (the record's `device`, summed
// over the pass), and a CPU rank's without them.
TEST(RankGathering, ThePassTravelsWithItsDeviceFigures) {
  auto sent = record(1, "");
  train::ProfiledTimeAccount pass;
  pass.source = "kineto_cuda";
  pass.exposed_comm_source = "device_timeline";
  pass.pass.iterations = 2;
  account::DeviceFigures device;
  device.busy_seconds = 0.012;
  device.hidden_comm_seconds = 0.003;
  device.activities = 1840;
  device.unlaunched_activities = 2;
  device.unlaunched_seconds = 0.0004;
  pass.device = device;
  sent.time_account = pass;
  const auto arrived = distributed::rank_record_from_json(distributed::to_json(sent));
  ASSERT_TRUE(arrived.time_account.has_value());
  EXPECT_EQ(arrived.time_account->source, "kineto_cuda");
  EXPECT_EQ(arrived.time_account->exposed_comm_source, "device_timeline");
  ASSERT_TRUE(arrived.time_account->device.has_value());
  EXPECT_DOUBLE_EQ(arrived.time_account->device->busy_seconds, 0.012);
  EXPECT_DOUBLE_EQ(arrived.time_account->device->hidden_comm_seconds, 0.003);
  EXPECT_EQ(arrived.time_account->device->activities, 1840);
  EXPECT_EQ(arrived.time_account->device->unlaunched_activities, 2);
  EXPECT_DOUBLE_EQ(arrived.time_account->device->unlaunched_seconds, 0.0004);

  sent.time_account->device.reset();
  EXPECT_FALSE(distributed::rank_record_from_json(distributed::to_json(sent)).time_account->device.has_value());
}

TEST(RankGathering, NoLineWhenEveryRankHasItsAccount) {
  MeasuredRun run;
  merge_rank_records({record(0, ""), record(1, "")}, run);
  EXPECT_TRUE(time_account_messages(run).empty());
}

}  // namespace
}  // namespace tokbench::run
