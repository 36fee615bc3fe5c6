// The layout rules on hand-built shapes, values worked out by hand in the comments: DDP's bucket
// boundaries at the cap, FSDP's units per policy and their padding, the one Distributed Mode
// label, and the communication plan over a layout.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
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

// by_size over model(): subtrees lm_head 100, transformer 257 (wte 100, h 150 with h.0 = h.1 =
// 75 (attn 35, mlp 40), ln_f 7); root 357.
//  - 40: attn (35) is too small to visit; mlp (40) reaches 40 and is wrapped; h.0's remainder
//    35 does not; h (a list) and transformer (the dict) are never wrapped; wte and lm_head are.
//    The root keeps the attentions and ln_f: 35 + 35 + 7 = 77, padded to 80 at S = 4.
//  - 35: attn reaches 35 too, so both blocks are fully wrapped below their own level.
//  - 70: the mlps (40) stay, the blocks (75) are wrapped whole.
//  - 358: nothing is big enough, one root unit (as whole_model, but named "root").
TEST(FsdpUnits, BySizeWrapsModulesWhoseUnwrappedRemainderReachesTheThreshold) {
  auto names = [](const Layout& l) {
    std::vector<std::string> out;
    for (const auto& u : l.units) out.push_back(u.name);
    return out;
  };
  const Layout l40 = layout_fsdp_units(model(), UnitPolicy::by_size, 4, 40);
  EXPECT_EQ(names(l40), (std::vector<std::string>{"root", "lm_head", "transformer.wte", "transformer.h.0.mlp",
                                                  "transformer.h.1.mlp"}));
  EXPECT_EQ(elements(l40), (std::vector<int64_t>{77, 100, 100, 40, 40}));
  EXPECT_EQ(l40.units[0].parameters, (std::vector<int64_t>{2, 3, 5, 6, 8}));
  EXPECT_EQ(l40.units[0].offsets, (std::vector<int64_t>{0, 30, 35, 65, 70}));
  EXPECT_EQ(l40.units[0].padded_elements, 80);
  const Layout l35 = layout_fsdp_units(model(), UnitPolicy::by_size, 1, 35);
  EXPECT_EQ(names(l35), (std::vector<std::string>{"root", "lm_head", "transformer.wte", "transformer.h.0.attn",
                                                  "transformer.h.0.mlp", "transformer.h.1.attn", "transformer.h.1.mlp"}));
  EXPECT_EQ(names(layout_fsdp_units(model(), UnitPolicy::by_size, 1, 70)),
            (std::vector<std::string>{"root", "lm_head", "transformer.wte", "transformer.h.0", "transformer.h.1"}));
  const Layout whole = layout_fsdp_units(model(), UnitPolicy::by_size, 1, 358);
  EXPECT_EQ(names(whole), (std::vector<std::string>{"root"}));
  EXPECT_EQ(elements(whole), (std::vector<int64_t>{357}));
  EXPECT_THROW(layout_fsdp_units(model(), UnitPolicy::by_size, 1, 0), std::invalid_argument);
  EXPECT_NO_THROW(layout_fsdp_units(model(), UnitPolicy::per_block, 1, 0));  // the others ignore it
}

// PyTorch's own answer: scripts/reference/fsdp_size_units.py wrapped litgpt's GPT (pythia and
// a Llama shape, 3 blocks) in FullyShardedDataParallel with size_based_auto_wrap_policy at
// thresholds from 1 to above the model and recorded every FSDP instance's flat parameter. The
// layout must give the same units, holding the same parameters in the same order, from the
// names and sizes alone. (PyTorch keeps an FSDP root with no flat parameter when everything
// is wrapped below it; the layout has no empty unit.)
TEST(FsdpUnits, BySizeEqualsPyTorchsSizeBasedAutoWrapPolicyOnLitgpt) {
  std::ifstream in(TOKBENCH_FSDP_SIZE_FIXTURE);
  ASSERT_TRUE(in) << TOKBENCH_FSDP_SIZE_FIXTURE;
  const auto fixture = nlohmann::json::parse(in);
  ASSERT_GE(fixture.at("cases").size(), 20u);
  std::size_t nested = 0;  // cases with a unit inside a unit (the block around its wrapped mlp)
  for (const auto& c : fixture.at("cases")) {
    const std::string what = c.at("model").get<std::string>() + " at " + std::to_string(c.at("min_num_params").get<int64_t>());
    std::vector<ParameterShape> shapes;
    for (const auto& p : c.at("parameters")) shapes.push_back({p.at("name"), p.at("elements"), 4, 0});
    const Layout l = layout_fsdp_units(shapes, UnitPolicy::by_size, 2, c.at("min_num_params").get<int64_t>());
    std::vector<std::pair<std::string, std::vector<std::string>>> expected, got;
    for (const auto& u : c.at("units")) {
      if (u.at("parameters").empty()) continue;
      const std::string module = u.at("module");
      expected.emplace_back(module.empty() ? "root" : module, u.at("parameters").get<std::vector<std::string>>());
    }
    for (const auto& u : l.units) {
      std::vector<std::string> held;
      for (const int64_t i : u.parameters) held.push_back(shapes[i].name);
      got.emplace_back(u.name, held);
      EXPECT_EQ(u.padded_elements % 2, 0) << what;
    }
    EXPECT_EQ(got, expected) << what;
    for (const auto& [outer, p1] : expected)
      for (const auto& [inner, p2] : expected)
        if (outer != "root" && inner.rfind(outer + ".", 0) == 0) ++nested;
  }
  EXPECT_GT(nested, 0u) << "the fixture no longer has a unit inside a unit";
}

// ZeRO-3's gathers over model() (timed units: 0 wte, 1 block 0, 2 block 1, 3 the head).
//  - per_block: root 0, block.0 1, block.1 2: each block needs its own unit, the root is kept.
//  - per_layer: lm_head 0, wte 1, h.0.attn 2, h.0.mlp 3, h.1.attn 4, h.1.mlp 5, ln_f 6: a block
//    gathers both its layers; the kept set is the embedding's and the head's three units.
//  - by_size 40: root 0 (both attentions and ln_f), lm_head 1, wte 2, h.0.mlp 3, h.1.mlp 4: each
//    block needs the root too, which is kept, so only its mlp is freed after it.
//  - one unit "h" holding both blocks: it stays whole after block 0 (block 1 needs it).
TEST(Zero3Gathers, EachBlockGathersTheUnitsHoldingItsParameters) {
  using Units = std::vector<int64_t>;
  const Zero3Gathers block = zero3_gathers(layout_fsdp_units(model(), UnitPolicy::per_block, 1));
  EXPECT_EQ(block.needs, (std::vector<Units>{{0}, {1}, {2}, {0}}));
  EXPECT_EQ(block.kept, (Units{0}));
  EXPECT_EQ(block.free_after_forward, (std::vector<Units>{{}, {1}, {2}, {}}));
  const Zero3Gathers layer = zero3_gathers(layout_fsdp_units(model(), UnitPolicy::per_layer, 1));
  EXPECT_EQ(layer.needs, (std::vector<Units>{{1}, {2, 3}, {4, 5}, {0, 6}}));
  EXPECT_EQ(layer.kept, (Units{0, 1, 6}));
  EXPECT_EQ(layer.free_after_forward, (std::vector<Units>{{}, {2, 3}, {4, 5}, {}}));
  const Zero3Gathers size = zero3_gathers(layout_fsdp_units(model(), UnitPolicy::by_size, 1, 40));
  EXPECT_EQ(size.needs, (std::vector<Units>{{2}, {0, 3}, {0, 4}, {0, 1}}));
  EXPECT_EQ(size.kept, (Units{0, 1, 2}));
  EXPECT_EQ(size.free_after_forward, (std::vector<Units>{{}, {3}, {4}, {}}));
  const Zero3Gathers whole = zero3_gathers(layout_fsdp_units(model(), UnitPolicy::whole_model, 1));
  EXPECT_EQ(whole.needs, (std::vector<Units>{{0}, {0}, {0}, {0}}));
  EXPECT_EQ(whole.free_after_forward, (std::vector<Units>{{}, {}, {}, {}}));

  Layout spanning;
  spanning.parameters = model();
  spanning.units = {CommUnit{"root", {0, 1, 8}}, CommUnit{"h", {2, 3, 4, 5, 6, 7}}};
  const Zero3Gathers span = zero3_gathers(spanning);
  EXPECT_EQ(span.needs, (std::vector<Units>{{0}, {1}, {1}, {0}}));
  EXPECT_EQ(span.free_after_forward, (std::vector<Units>{{}, {}, {1}, {}}));

  Layout hollow = spanning;  // block 1's parameters in no unit
  hollow.units[1].parameters = {2, 3, 4};
  EXPECT_THROW(zero3_gathers(hollow), std::invalid_argument);
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
  EXPECT_EQ(parse_unit_policy("size"), UnitPolicy::by_size);
  EXPECT_EQ(distributed_mode_label(DistMode::fsdp, ShardMode::zero2, false, UnitPolicy::by_size),
            "fsdp_zero2_size_bucketing");
  EXPECT_EQ(parse_comm_backend("nccl"), CommBackend::nccl);
  try {
    parse_dist_mode("zero");
    FAIL() << "accepted 'zero'";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "--distributed-mode 'zero' is not valid; valid: none, ddp, fsdp, fsdp2");
  }
}

// The mode table: each mode one entry, its word parsed back to it, found by its enum; the
// properties the run and predict ask of it are the reference's (fsdp2 is the Python executors'
// fully_shard, ignores size units and is not predicted; torchao's fp8 runs under none and fsdp2).
TEST(Vocabulary, EveryModeIsOneEntry) {
  std::vector<std::string> words;
  for (const ModeEntry& e : mode_entries()) {
    words.emplace_back(e.word);
    EXPECT_EQ(parse_dist_mode(e.word), e.mode);
    EXPECT_EQ(&mode_entry(e.mode), &e);
    EXPECT_EQ(find_mode(e.word), &e);
    EXPECT_EQ(std::string(to_string(e.mode)), e.word);
    EXPECT_EQ(is_sharded(e.mode), e.sharded);
  }
  EXPECT_EQ(words, mode_words());
  EXPECT_EQ(find_mode("zero3"), nullptr);
  EXPECT_EQ(mode_words([](const ModeEntry& e) { return e.torchao_fp8; }), (std::vector<std::string>{"none", "fsdp2"}));
  EXPECT_EQ(mode_words([](const ModeEntry& e) { return e.predict_refusal == nullptr; }),
            (std::vector<std::string>{"none", "ddp", "fsdp"}));
  EXPECT_EQ(mode_entry(DistMode::fsdp2).layout, LayoutKind::fully_shard);
  EXPECT_NE(mode_entry(DistMode::fsdp2).own_step_refusal, nullptr);
  EXPECT_EQ(mode_entry(DistMode::fsdp).own_step_refusal, nullptr);
  EXPECT_EQ(effective_unit_policy(DistMode::fsdp2, UnitPolicy::by_size), UnitPolicy::per_block);
  EXPECT_EQ(effective_unit_policy(DistMode::fsdp, UnitPolicy::by_size), UnitPolicy::by_size);
  EXPECT_EQ(kDefaultDdpBucketBytes, 25'000'000);  // PyTorch DDP's bucket_cap_mb = 25
}

// --shard-mode's words (the reference's): each names one shard mode and whether the groups are
// hybrid, each is read back to what shard_mode_label builds it from, and any other is refused
// naming all four.
TEST(Vocabulary, ShardWordsAreTheLabelsBothWays) {
  EXPECT_EQ(shard_mode_words(), (std::vector<std::string>{"zero2", "zero3", "hybrid_zero2", "hybrid_zero3"}));
  for (const std::string& word : shard_mode_words()) {
    const ShardWord w = parse_shard_word(word);
    EXPECT_EQ(shard_mode_label(w.mode, w.hybrid), word);
    ASSERT_TRUE(find_shard_word(word).has_value());
    EXPECT_EQ(find_shard_word(word)->mode, w.mode);
  }
  EXPECT_EQ(parse_shard_word("hybrid_zero3").mode, ShardMode::zero3);
  EXPECT_TRUE(parse_shard_word("hybrid_zero3").hybrid);
  EXPECT_EQ(parse_shard_word("zero2").mode, ShardMode::zero2);
  EXPECT_FALSE(parse_shard_word("zero2").hybrid);
  EXPECT_EQ(default_shard_word(), "zero2");  // the reference's --shard_mode default
  EXPECT_FALSE(find_shard_word("hybrid_").has_value());
  EXPECT_FALSE(find_shard_word("zero3_hybrid").has_value());
  try {
    parse_shard_word("zero4", "--shard_mode");
    FAIL() << "accepted 'zero4'";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "--shard_mode 'zero4' is not valid; valid: zero2, zero3, hybrid_zero2, hybrid_zero3");
  }
}

}  // namespace
}  // namespace tokbench::parallel
