// The layout rules on hand-built shapes, values worked out by hand in the comments: DDP's bucket
// boundaries at the cap, FSDP's units per policy and their padding, the one Distributed Mode
// label, and the communication plan over a layout.
#include <gtest/gtest.h>

#include <stdexcept>

#include "parallel/comm_plan.hpp"
#include "parallel/layout.hpp"
#include "parallel/strategy.hpp"

namespace tokbench::parallel {
namespace {

// A two-block model as the GPT registers it: lm_head first (the head, timed unit 3), the
// embedding (0), block 0 (1), block 1 (2), the final norm last (head again). fp32.
std::vector<ParameterShape> model() {
  return {{"lm_head.weight", 100, 4, 3},
          {"transformer.wte.weight", 100, 4, 0},
          {"transformer.h.0.attn.weight", 30, 4, 1},
          {"transformer.h.0.attn.bias", 5, 4, 1},
          {"transformer.h.0.mlp.weight", 40, 4, 1},
          {"transformer.h.1.attn.weight", 30, 4, 2},
          {"transformer.h.1.attn.bias", 5, 4, 2},
          {"transformer.h.1.mlp.weight", 40, 4, 2},
          {"transformer.ln_f.weight", 7, 4, 3}};
}

std::vector<int64_t> elements(const Layout& l) {
  std::vector<int64_t> out;
  for (const auto& u : l.units) out.push_back(u.elements);
  return out;
}

// Reverse order: ln_f 7, h.1.mlp 40, h.1.bias 5, h.1.attn 30, h.0.mlp 40, h.0.bias 5, h.0.attn 30,
// wte 100, lm_head 100. Cap 320 bytes = 80 elements:
//   7 + 40 = 47, + 5 = 52, + 30 = 82 > 80: close [ln_f, h.1.mlp, h.1.bias] = 52;
//   30 + 40 = 70, + 5 = 75, + 30 = 105 > 80: close [h.1.attn, h.0.mlp, h.0.bias] = 75;
//   30, + 100 > 80: close [h.0.attn] = 30; 100 alone (over the cap, taken whole) = 100;
//   lm_head 100 alone = 100.
TEST(DdpBuckets, CloseBeforeTheParameterThatWouldPassTheCap) {
  const Layout l = layout_ddp_buckets(model(), 320);
  EXPECT_EQ(elements(l), (std::vector<int64_t>{52, 75, 30, 100, 100}));
  EXPECT_EQ(l.units[0].parameters, (std::vector<int64_t>{8, 7, 6}));
  EXPECT_EQ(l.units[0].offsets, (std::vector<int64_t>{0, 7, 47}));
  EXPECT_EQ(l.units[0].name, "bucket.0");
  EXPECT_EQ(l.units[4].name, "bucket.4");
  EXPECT_EQ(l.units[1].padded_elements, 75);  // DDP pads nothing
  EXPECT_EQ(l.units[1].padded_bytes(), 300);
}

// Exactly at the cap: 7 + 40 + 5 + 30 = 82 elements = 328 bytes. A cap of 328 takes the fourth
// parameter (82 x 4 is not past 328); 327 does not.
TEST(DdpBuckets, ABucketMayFillTheCapExactly) {
  EXPECT_EQ(layout_ddp_buckets(model(), 328).units[0].elements, 82);
  EXPECT_EQ(layout_ddp_buckets(model(), 327).units[0].elements, 52);
  // A cap above the whole model (357 elements, 1428 bytes): one bucket.
  EXPECT_EQ(elements(layout_ddp_buckets(model(), 1428)), (std::vector<int64_t>{357}));
}

// whole_model: 357 elements; S = 4 pads to 360 (90 per rank); S = 1 pads nothing.
TEST(FsdpUnits, WholeModelIsOneUnitPaddedToTheShardSize) {
  const Layout l = layout_fsdp_units(model(), UnitPolicy::whole_model, 4);
  ASSERT_EQ(l.units.size(), 1u);
  EXPECT_EQ(l.units[0].name, "model");
  EXPECT_EQ(l.units[0].elements, 357);
  EXPECT_EQ(l.units[0].padded_elements, 360);
  EXPECT_EQ(l.units[0].offsets.back(), 350);  // ln_f after 100 + 100 + 75 + 75
  EXPECT_EQ(layout_fsdp_units(model(), UnitPolicy::whole_model, 1).units[0].padded_elements, 357);
}

// per_block, S = 3: root = lm_head 100 + wte 100 + ln_f 7 = 207 (a multiple of 3: no padding);
// block.0 = block.1 = 75 (a multiple of 3). S = 2: 207 -> 208, 75 -> 76.
TEST(FsdpUnits, PerBlockIsTheRootThenEachBlock) {
  Layout l = layout_fsdp_units(model(), UnitPolicy::per_block, 3);
  ASSERT_EQ(l.units.size(), 3u);
  EXPECT_EQ(l.units[0].name, "root");
  EXPECT_EQ(l.units[0].parameters, (std::vector<int64_t>{0, 1, 8}));
  EXPECT_EQ(l.units[0].offsets, (std::vector<int64_t>{0, 100, 200}));
  EXPECT_EQ(l.units[1].name, "block.0");
  EXPECT_EQ(l.units[2].name, "block.1");
  EXPECT_EQ(elements(l), (std::vector<int64_t>{207, 75, 75}));
  EXPECT_EQ(l.units[0].padded_elements, 207);
  l = layout_fsdp_units(model(), UnitPolicy::per_block, 2);
  EXPECT_EQ(l.units[0].padded_elements, 208);
  EXPECT_EQ(l.units[1].padded_elements, 76);
}

// per_layer: one unit per module owning parameters, in registration order: lm_head 100,
// wte 100, h.0.attn 35 (weight and bias), h.0.mlp 40, h.1.attn 35, h.1.mlp 40, ln_f 7.
// S = 4: 100, 100, 36, 40, 36, 40, 8.
TEST(FsdpUnits, PerLayerIsEachModuleOwningParameters) {
  const Layout l = layout_fsdp_units(model(), UnitPolicy::per_layer, 4);
  EXPECT_EQ(elements(l), (std::vector<int64_t>{100, 100, 35, 40, 35, 40, 7}));
  EXPECT_EQ(l.units[2].name, "transformer.h.0.attn");
  EXPECT_EQ(l.units[6].name, "transformer.ln_f");
  std::vector<int64_t> padded;
  for (const auto& u : l.units) padded.push_back(u.padded_elements);
  EXPECT_EQ(padded, (std::vector<int64_t>{100, 100, 36, 40, 36, 40, 8}));
}

TEST(Layouts, RefuseWhatNoStepHas) {
  EXPECT_THROW(layout_ddp_buckets({}, 100), std::invalid_argument);
  EXPECT_THROW(layout_ddp_buckets(model(), 0), std::invalid_argument);
  EXPECT_THROW(layout_fsdp_units(model(), UnitPolicy::per_block, 0), std::invalid_argument);
  auto mixed = model();
  mixed[1].element_bytes = 2;
  EXPECT_THROW(layout_fsdp_units(mixed, UnitPolicy::whole_model, 2), std::invalid_argument);
}

// ZeRO-2 per block on NCCL, W = 4 in shard groups of 2 (hybrid, 2 replicas), GA 3, over the
// per_block layout at S = 2 (root 208, blocks 76 elements; fp32). Per unit: reduce-scatter of
// the flat buffer every micro-batch, the replicas' all-reduce of the shard (flat / 2) once,
// the refresh all-gather once. Bytes per iteration: (208 + 76 + 76) x 4 = 1440 per flat pass:
// 1440 x 3 + 1440 / 2 + 1440 = 6480.
TEST(CommPlan, FollowsTheLayout) {
  const Layout l = layout_fsdp_units(model(), UnitPolicy::per_block, 2);
  CommSettings s;
  s.mode = DistMode::fsdp;
  s.world_size = 4;
  s.grad_accum = 3;
  const CommPlan plan = plan_communication(l, s);
  ASSERT_EQ(plan.collectives.size(), 9u);
  EXPECT_EQ(plan.collectives[0].unit, "root");
  EXPECT_EQ(plan.collectives[0].call, CollectiveCall::reduce_scatter);
  EXPECT_EQ(plan.collectives[0].bytes, 832);
  EXPECT_EQ(plan.collectives[0].per_iteration, 3);
  EXPECT_EQ(plan.collectives[1].group, CommGroup::replica);
  EXPECT_EQ(plan.collectives[1].bytes, 416);
  EXPECT_EQ(plan.collectives[2].purpose, CommPurpose::refresh_parameters);
  EXPECT_EQ(plan.bytes_per_iteration(), 6480);
  s.mode = DistMode::fsdp2;
  EXPECT_THROW(plan_communication(l, s), std::invalid_argument);
}

TEST(Vocabulary, OneLabelAndTheWordsBothWays) {
  EXPECT_EQ(distributed_mode_label(DistMode::none, ShardMode::zero3, true, UnitPolicy::per_block), "none");
  EXPECT_EQ(distributed_mode_label(DistMode::ddp, ShardMode::zero2, false, UnitPolicy::whole_model), "ddp");
  EXPECT_EQ(distributed_mode_label(DistMode::fsdp, ShardMode::zero2, false, UnitPolicy::whole_model),
            "fsdp_zero2_none_bucketing");
  EXPECT_EQ(distributed_mode_label(DistMode::fsdp2, ShardMode::zero3, true, UnitPolicy::per_block),
            "fsdp2_hybrid_zero3_block_bucketing");
  EXPECT_EQ(parse_unit_policy("layer"), UnitPolicy::per_layer);
  EXPECT_EQ(parse_comm_backend("nccl"), CommBackend::nccl);
  try {
    parse_dist_mode("zero");
    FAIL() << "accepted 'zero'";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "--distributed-mode 'zero' is not valid; valid: none, ddp, fsdp, fsdp2");
  }
}

}  // namespace
}  // namespace tokbench::parallel
