// The simulated iteration against schedules worked by hand, one per strategy. Every case has
// the same model and links, round numbers throughout:
//   units: embedding (forward 0, backward 0), block.0 and block.1 (forward 10 ms, backward
//   20 ms each), head (0, 0); every unit 25e6 fp32 parameters = 1e8 bytes (the FSDP root,
//   embedding + head, 2e8 bytes); optimizer 5 ms for the whole model on one rank.
//   links: 10 GB/s, efficiency 1, latency 0. Two ranks on one node unless said otherwise.
//   Ring times at n = 2: all-reduce of B bytes 2·(1/2)·B / 10 GB/s = B / 1e10 s (1e8 B: 10 ms);
//   all-gather / reduce-scatter (1/2)·B / 1e10 s (1e8 B: 5 ms, the root's 2e8 B: 10 ms).
#include <gtest/gtest.h>

#include "predict/collective_cost.hpp"
#include "predict/comm_plan.hpp"
#include "predict/schedule.hpp"

namespace tokbench::predict {
namespace {

constexpr int64_t kUnitElements = 25'000'000;  // x 4 bytes = 1e8 bytes

std::vector<UnitShape> units() {
  return {{"embedding", UnitKind::embedding, kUnitElements},
          {"block.0", UnitKind::block, kUnitElements},
          {"block.1", UnitKind::block, kUnitElements},
          {"head", UnitKind::head, kUnitElements}};
}

// Each unit as one fp32 parameter, in the model's registration order: lm_head (the head) first,
// then the embedding and the blocks.
std::vector<parallel::ParameterShape> parameters() {
  return {{"lm_head.weight", kUnitElements, 4, 3},
          {"transformer.wte.weight", kUnitElements, 4, 0},
          {"transformer.h.0.weight", kUnitElements, 4, 1},
          {"transformer.h.1.weight", kUnitElements, 4, 2}};
}

Cluster links(double intra_GBps, double inter_GBps) {
  Cluster c;
  c.name = "test";
  c.device = "cuda";
  c.devices_per_node = 8;
  c.intra_node = Link{intra_GBps, 0.0, 1.0};
  c.inter_node = Link{inter_GBps, 0.0, 1.0};
  return c;
}

ScheduleInput schedule_input(parallel::DistMode strategy, bool zero3, int64_t world, int64_t shard, int64_t nnodes,
                             double optimizer_s, const Cluster& cluster = links(10, 10), double steal = 0,
                             parallel::UnitPolicy policy = parallel::UnitPolicy::per_block, double comm_rate = 1) {
  CommPlanInput plan_input;
  plan_input.units = units();
  plan_input.parameters = parameters();
  plan_input.strategy = strategy;
  plan_input.zero3 = zero3;
  plan_input.fsdp_units = policy;
  plan_input.world_size = world;
  plan_input.shard_size = shard;
  plan_input.grad_accum = 1;
  plan_input.ddp_bucket_bytes = 100'000'000;  // 100 MB: one unit per bucket
  plan_input.backend = parallel::CommBackend::nccl;
  ScheduleInput in;
  in.strategy = strategy;
  in.zero3 = zero3;
  in.grad_accum = 1;
  in.forward_seconds = {0.0, 0.010, 0.010, 0.0};
  in.backward_seconds = {0.0, 0.020, 0.020, 0.0};
  in.optimizer_seconds = optimizer_s;
  in.plan = plan_communication(plan_input);
  const CollectiveTimer timer(cluster, std::nullopt, Placement{world, nnodes, world / nnodes, shard});
  for (const auto& c : in.plan.collectives) in.collective_seconds.push_back(timer.seconds(c));
  in.comm_compute_steal = steal;
  in.comm_rate_beside_compute = comm_rate;
  return in;
}

ScheduleResult simulate(parallel::DistMode strategy, bool zero3, int64_t world, int64_t shard, int64_t nnodes, double optimizer_s,
                        const Cluster& cluster = links(10, 10), double steal = 0,
                        parallel::UnitPolicy policy = parallel::UnitPolicy::per_block, double comm_rate = 1) {
  return simulate_iteration(schedule_input(strategy, zero3, world, shard, nnodes, optimizer_s, cluster, steal, policy, comm_rate));
}

// DDP, W = 2, buckets of 1e8 bytes: reverse registration order puts block.1, block.0, the
// embedding, then the head (lm_head, registered first) each in a bucket of its own; all-reduce
// 10 ms each. (ms)
//   forward 0 → 20. head backward 20 → 20: its bucket is complete, all-reduce 20 → 30.
//   block.1 backward 20 → 40: all-reduce 40 → 50. block.0 backward 40 → 60: all-reduce 60 → 70.
//   embedding backward 60 → 60: all-reduce queued behind, 70 → 80.
//   optimizer waits for every bucket: 60 → 80 (exposed 20), then 5 ms: iteration 85.
TEST(PredictSchedule, DdpBucketsOverlapBackward) {
  const ScheduleResult r = simulate(parallel::DistMode::ddp, false, 2, 1, 1, 0.005);
  EXPECT_NEAR(r.iteration_seconds, 0.085, 1e-9);
  EXPECT_NEAR(r.exposed_comm_seconds, 0.020, 1e-9);
  EXPECT_NEAR(r.comm_seconds, 0.040, 1e-9);
  EXPECT_NEAR(r.compute_seconds, 0.065, 1e-9);
  EXPECT_EQ(r.collectives.size(), 4u);
}

// The same DDP step with the step's own copies where it makes them: 2 ms before each bucket's
// issue (its gradients copied in), 4 ms after each bucket's wait (scaled, copied back). Buckets
// b0..b3 are block.1, block.0, the embedding, the head (layout order); the step waits in that
// order. (ms)
//   forward 0 → 20. head ready at 20: copy 20 → 22, all-reduce 22 → 32.
//   block.1 backward 22 → 42: copy 42 → 44, all-reduce 44 → 54.
//   block.0 backward 44 → 64: copy 64 → 66, all-reduce 66 → 76.
//   embedding backward 66 → 66: copy 66 → 68, all-reduce queued behind, 76 → 86.
//   b0 done at 54: copy back 68 → 72. b1: wait 72 → 76, copy 76 → 80. b2: wait 80 → 86, copy
//   86 → 90. b3 done at 32: copy 90 → 94. optimizer 94 → 99: iteration 99, exposed 10, copies 24.
// All 24 ms of copies after the last wait instead would end at 85 + 24 = 109.
TEST(PredictSchedule, DdpCopiesRunWhereTheStepMakesThem) {
  ScheduleInput in = schedule_input(parallel::DistMode::ddp, false, 2, 1, 1, 0.005);
  ASSERT_EQ(in.plan.collectives.size(), 4u);
  in.copy_before_issue_seconds.assign(4, 0.002);
  in.copy_after_wait_seconds.assign(4, 0.004);
  const ScheduleResult r = simulate_iteration(in);
  EXPECT_NEAR(r.iteration_seconds, 0.099, 1e-9);
  EXPECT_NEAR(r.exposed_comm_seconds, 0.010, 1e-9);
  EXPECT_NEAR(r.step_copy_seconds, 0.024, 1e-9);
  EXPECT_NEAR(r.compute_seconds, 0.065 + 0.024, 1e-9);
  // Beside a collective a copy is slowed as compute is: with a steal, more than 24 ms of clock.
  in.comm_compute_steal = 0.5;
  const ScheduleResult slowed = simulate_iteration(in);
  EXPECT_NEAR(slowed.step_copy_seconds, 0.024, 1e-9);
  EXPECT_GT(slowed.contention_seconds, 0.0);
  // The copies' part of it is counted apart (the account books it as elementwise, where the
  // copies are): some copies ran beside a collective, and not all the contention was theirs.
  EXPECT_GT(slowed.copy_contention_seconds, 0.0);
  EXPECT_LT(slowed.copy_contention_seconds, slowed.contention_seconds);
  EXPECT_NEAR(r.copy_contention_seconds, 0.0, 1e-12) << "no steal, no contention (to rounding)";
  // Copies that take no time are slowed by nothing.
  in.copy_before_issue_seconds.assign(4, 0.0);
  in.copy_after_wait_seconds.assign(4, 0.0);
  EXPECT_EQ(simulate_iteration(in).copy_contention_seconds, 0.0);
  // One time per planned collective, or none.
  in.copy_after_wait_seconds.assign(3, 0.004);
  EXPECT_THROW(simulate_iteration(in), std::invalid_argument);
}

// FSDP ZeRO-2, W = S = 2, units root (2e8 B), block.0, block.1 (1e8 B); optimizer 5 ms / 2 =
// 2.5 ms (half the elements per rank). (ms)
//   forward 0 → 20; head backward 20 → 20 (the root is reduced after the embedding's).
//   block.1 backward 20 → 40: reduce-scatter 40 → 45.
//   block.0 backward 40 → 60: reduce-scatter 60 → 65; block.1's (done at 45) completed, no wait.
//   embedding backward 60 → 60: root reduce-scatter 65 → 75; block.0's completed: wait 60 → 65.
//   micro-batch end completes the root's: wait 65 → 75. optimizer 75 → 77.5.
//   updated shards gathered: root 10, block.0 5, block.1 5: 77.5 → 97.5, all waited.
//   iteration 97.5; exposed 5 + 10 + 20 = 35.
TEST(PredictSchedule, Zero2ReduceScatterPerUnitThenRefresh) {
  const ScheduleResult r = simulate(parallel::DistMode::fsdp, false, 2, 2, 1, 0.0025);
  EXPECT_NEAR(r.iteration_seconds, 0.0975, 1e-9);
  EXPECT_NEAR(r.exposed_comm_seconds, 0.035, 1e-9);
  EXPECT_NEAR(r.comm_seconds, 0.040, 1e-9);
}

// FSDP ZeRO-3, W = S = 2. (ms)
//   root gathered 0 → 10 (waited: 10); block.0 gathered ahead 10 → 15 (waited: 5).
//   block.1 gathered ahead 15 → 20; block.0 forward 15 → 25; block.1 forward 25 → 35 (no wait).
//   backward: root gathered again 35 → 45 (waited: 10); block.1 gathered ahead 45 → 50
//   (waited: 5); block.0 gathered ahead 50 → 55. block.1 backward 50 → 70: reduce-scatter 70 → 75.
//   block.0 backward 70 → 90 (its gather long done): reduce-scatter 90 → 95.
//   embedding backward 90 → 90: root reduce-scatter 95 → 105; block.0's waited 90 → 95 (5).
//   micro-batch end: root's waited 95 → 105 (10). optimizer 105 → 107.5; no refresh.
//   iteration 107.5; exposed 10 + 5 + 10 + 5 + 5 + 10 = 45.
TEST(PredictSchedule, Zero3GathersAheadAndAgainForBackward) {
  const ScheduleResult r = simulate(parallel::DistMode::fsdp, true, 2, 2, 1, 0.0025);
  EXPECT_NEAR(r.iteration_seconds, 0.1075, 1e-9);
  EXPECT_NEAR(r.exposed_comm_seconds, 0.045, 1e-9);
  EXPECT_NEAR(r.comm_seconds, 0.060, 1e-9);
}

// ZeRO-3 over per-layer units: lm_head, wte, h.0 and h.1 each a unit of 1e8 B (gather and
// reduce-scatter 5 ms each); the embedding's and the head's units are kept through the forward.
// (ms) forward: lm_head 0 → 5 and wte 5 → 10 gathered (waited: 10); h.0 10 → 15 (waited: 5);
//   h.1 15 → 20 ahead; block.0 15 → 25, block.1 25 → 35.
//   backward: lm_head gathered 35 → 40 (waited: 5), h.1 ahead 40 → 45; lm_head reduce-scatter
//   45 → 50. block.1 waits for h.1 to 45 (5), h.0 ahead 50 → 55; 45 → 65; h.1 reduce-scatter
//   65 → 70. block.0: wte ahead 70 → 75; 65 → 85; h.0 reduce-scatter 85 → 90. embedding: wte
//   reduce-scatter 90 → 95; the micro-batch's end waits for h.0's to 90 (5) and wte's to 95 (5).
//   optimizer 95 → 97.5. exposed 10 + 5 + 5 + 5 + 5 + 5 = 35; comm 12 x 5 = 60.
TEST(PredictSchedule, Zero3GathersEachBlocksUnitsWhateverCutThem) {
  const ScheduleResult r =
      simulate(parallel::DistMode::fsdp, true, 2, 2, 1, 0.0025, links(10, 10), 0, parallel::UnitPolicy::per_layer);
  EXPECT_NEAR(r.iteration_seconds, 0.0975, 1e-9);
  EXPECT_NEAR(r.exposed_comm_seconds, 0.035, 1e-9);
  EXPECT_NEAR(r.comm_seconds, 0.060, 1e-9);
}

// Hybrid ZeRO-2: 2 nodes x 2 ranks, shard groups of S = 2 inside a node (10 GB/s), replica
// groups of W/S = 2 across nodes (inter-node 5 GB/s bounds the flat ring). Backward as ZeRO-2
// above, ending at 75. Each summed shard (root 1e8 B, blocks 5e7 B) is all-reduced across the
// replicas: B / 5e9 s = 20, 10, 10 ms: 75 → 115, waited (40). optimizer 115 → 117.5; refresh
// 117.5 → 137.5 (20). iteration 137.5; exposed 5 + 10 + 40 + 20 = 75.
TEST(PredictSchedule, HybridAllReducesShardsAcrossReplicas) {
  const ScheduleResult r = simulate(parallel::DistMode::fsdp, false, 4, 2, 2, 0.0025, links(10, 5));
  EXPECT_NEAR(r.iteration_seconds, 0.1375, 1e-9);
  EXPECT_NEAR(r.exposed_comm_seconds, 0.075, 1e-9);
}

// DDP as above on CPU ranks with one core each: a running collective stops the computation
// (steal 1). (ms) head's all-reduce 20 → 30 holds block.1's backward to 30 → 50; its
// all-reduce 50 → 60 holds block.0's to 60 → 80; block.0's all-reduce 80 → 90, the
// embedding's 90 → 100; the optimizer waits 80 → 100 (exposed 20), then 100 → 105.
// Contention: 10 + 10 = 20.
TEST(PredictSchedule, CpuCollectivesTakeTheComputesCore) {
  const ScheduleResult r = simulate(parallel::DistMode::ddp, false, 2, 1, 1, 0.005, links(10, 10), 1.0);
  EXPECT_NEAR(r.iteration_seconds, 0.105, 1e-9);
  EXPECT_NEAR(r.exposed_comm_seconds, 0.020, 1e-9);
  EXPECT_NEAR(r.contention_seconds, 0.020, 1e-9);
}

// The same DDP iteration with the cores shared both ways: while a collective runs beside the
// compute, the compute runs at half its rate (steal 0.5) and the collective at half its own.
// (ms) head's all-reduce issued at 20 beside block.1's backward: both at half rate, the
// all-reduce's 10 ms end at 40 with 10 of the backward's 20 done, the rest 40 → 50. block.1's
// all-reduce 50 → 70 beside block.0's backward (10 done), the rest 70 → 80. block.0's and the
// embedding's all-reduces: nothing computes beside them, 80 → 90 → 100, waited (exposed 20);
// optimizer 100 → 105. Contention 10 + 10 = 20. With the collectives at their own rate (the
// earlier rule) the same steal gives 95: compute and collectives together asked for more cores
// than the node has.
TEST(PredictSchedule, CpuCollectivesAndComputeShareTheCoresBothWays) {
  const ScheduleResult earlier = simulate(parallel::DistMode::ddp, false, 2, 1, 1, 0.005, links(10, 10), 0.5);
  EXPECT_NEAR(earlier.iteration_seconds, 0.095, 1e-9);
  const ScheduleResult r = simulate(parallel::DistMode::ddp, false, 2, 1, 1, 0.005, links(10, 10), 0.5,
                                    parallel::UnitPolicy::per_block, 0.5);
  EXPECT_NEAR(r.iteration_seconds, 0.105, 1e-9);
  EXPECT_NEAR(r.exposed_comm_seconds, 0.020, 1e-9);
  EXPECT_NEAR(r.contention_seconds, 0.020, 1e-9);
  EXPECT_NEAR(r.comm_seconds, 0.040, 1e-9);  // the collectives' own times, as measured
  ASSERT_EQ(r.collectives.size(), 4u);
  EXPECT_NEAR(r.collectives[0].started, 0.020, 1e-9);
  EXPECT_NEAR(r.collectives[0].finished, 0.040, 1e-9);
  EXPECT_NEAR(r.collectives[3].started, 0.090, 1e-9);
  EXPECT_NEAR(r.collectives[3].finished, 0.100, 1e-9);
}

TEST(PredictSchedule, OneRankIsComputeAlone) {
  const ScheduleResult r = simulate(parallel::DistMode::none, false, 1, 1, 1, 0.005);
  EXPECT_NEAR(r.iteration_seconds, 0.065, 1e-9);
  EXPECT_EQ(r.exposed_comm_seconds, 0.0);
}

TEST(PredictCommPlan, GlooSendsWholeBuffersThroughAllReduce) {
  CommPlanInput in;
  in.units = units();
  in.parameters = parameters();
  in.strategy = parallel::DistMode::fsdp;
  in.zero3 = true;
  in.fsdp_units = parallel::UnitPolicy::per_block;
  in.world_size = 3;  // 25e6 elements pad to 25000002 per block
  in.shard_size = 3;
  in.grad_accum = 2;
  in.backend = parallel::CommBackend::gloo;
  const CommPlan plan = plan_communication(in);
  ASSERT_EQ(plan.units.size(), 3u);
  EXPECT_EQ(plan.units[1].padded_elements, 25'000'002);
  for (const auto& c : plan.collectives) EXPECT_EQ(c.call, CollectiveCall::all_reduce);
  // Per unit: gather for forward, for backward, reduce-scatter; each every micro-batch.
  EXPECT_EQ(plan.collectives.size(), 9u);
  EXPECT_EQ(plan.collectives[3].bytes, 25'000'002 * 4);
  EXPECT_EQ(plan.collectives[3].per_iteration, 2);
  EXPECT_EQ(plan.bytes_per_iteration(), int64_t{2} * 3 * 4 * (50'000'001 + 2 * 25'000'002));
}

TEST(PredictCommPlan, RefusesUnitsThatAreNotTheModels) {
  CommPlanInput in;
  in.units = {{"block.0", UnitKind::block, 10}, {"head", UnitKind::head, 10}};
  in.strategy = parallel::DistMode::ddp;
  in.world_size = 2;
  EXPECT_THROW(plan_communication(in), std::invalid_argument);
}

}  // namespace
}  // namespace tokbench::predict
