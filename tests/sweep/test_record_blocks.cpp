// The record's nested blocks as types (results/record_blocks.hpp): each writer's JSON keeps the
// keys and order the record has always had, its reader gives back what was written, reads a
// value of the wrong type as absent (the caller refuses what it needs), and the one count that
// must not pass for absent (unit_timings.micro_batches_per_iteration) is refused by name; the
// reference probe's block reads back to the same bytes.
#include <gtest/gtest.h>

#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "results/record_blocks.hpp"
#include "results/record_keys.hpp"

namespace tokbench::results {
namespace {

std::vector<std::string> keys_of(const Block& object) {
  std::vector<std::string> keys;
  for (const auto& [k, v] : object.items()) keys.push_back(k);
  return keys;
}

TEST(RecordBlocks, IterationsKeepTheirKeysAndReadBack) {
  std::vector<IterationEntry> written(3);
  written[0] = {.index = 0, .warmup = true, .time_ms = 12.5, .loss = 10.5, .real_tokens = std::nullopt};
  written[1] = {.index = 1, .warmup = false, .time_ms = 9.0, .loss = std::nullopt, .real_tokens = std::nullopt};
  written[2] = {.index = 2, .warmup = false, .time_ms = 8.0, .loss = 9.5, .real_tokens = 77};  // --dynamic
  const Block j = to_json(written);
  ASSERT_EQ(j.size(), 3u);
  EXPECT_EQ(keys_of(j[0]), (std::vector<std::string>{"index", "warmup", "time_ms", "loss"}));
  EXPECT_TRUE(j[1]["loss"].is_null());
  EXPECT_EQ(keys_of(j[2]).back(), "real_tokens");
  const auto read = iterations_from_json(j);
  ASSERT_EQ(read.size(), 3u);
  EXPECT_EQ(read[0].index, 0);
  EXPECT_TRUE(read[0].warmup);
  EXPECT_FALSE(read[1].loss);
  EXPECT_EQ(read[2].real_tokens, 77);
  EXPECT_FALSE(read[1].real_tokens);
  // The measured ones only, in order.
  EXPECT_EQ(measured_times_ms(read), (std::vector<double>{9.0, 8.0}));
}

TEST(RecordBlocks, IterationsReaderSkipsWhatIsNoEntry) {
  Block j = Block::parse(R"([{"warmup": false, "time_ms": "fast"}, 3, {"warmup": "no", "time_ms": 4.0}])");
  const auto read = iterations_from_json(j);
  ASSERT_EQ(read.size(), 2u);  // the 3 is no entry
  EXPECT_FALSE(read[0].time_ms);
  EXPECT_FALSE(read[1].warmup);  // not true: measured
  EXPECT_EQ(measured_times_ms(read), (std::vector<double>{4.0}));
  EXPECT_TRUE(iterations_from_json(Block(nullptr)).empty());
}

TEST(RecordBlocks, RanksKeepTheirPlacesAndTheRecordsKeys) {
  std::vector<RankEntry> written(2);
  written[0].rank = 0;
  written[0].host = "a";
  written[0].peak_rss_gb = 1.5;
  written[0].time_account = nullptr;
  written[1].rank = 1;
  written[1].host = "b";
  const Block j = to_json(written);
  EXPECT_EQ(keys_of(j[0]).front(), "rank");
  EXPECT_EQ(keys_of(j[0]).back(), "time_account");
  EXPECT_TRUE(j[0].contains("memory_allocated_peak_GB"));
  Block with_hole = j;
  with_hole.push_back("not a rank");
  const auto read = ranks_from_json(with_hole);
  ASSERT_EQ(read.size(), 3u);
  EXPECT_EQ(read[0].host, "a");
  EXPECT_EQ(read[1].host, "b");
  EXPECT_EQ(read[0].peak_rss_gb, 1.5);
  EXPECT_FALSE(read[2].host);
}

// The record's breakdown and a rank's go through the one conversion: the same six keys, the same
// values, null where a part is unknown, and a rank's reads back as written.
TEST(RecordBlocks, MemoryBreakdownIsTheSameKeysInTheRecordAndEachRank) {
  const MemoryBreakdownGB b{.parameters = 1.25, .gradients = 2.5, .optimizer_state = 5.0, .activations = 0.75,
                            .comm_buffers = 0.125, .allocator_reserve = std::nullopt};
  RunRecord record;
  put_memory_breakdown(record, b);
  const Block whole = to_json(record);
  std::vector<RankEntry> ranks(1);
  ranks[0].memory = b;
  const Block rank = to_json(ranks)[0];
  const std::vector<std::pair<const char*, std::optional<double>>> expected{
      {key::memory_parameters_gb, 1.25},   {key::memory_gradients_gb, 2.5},
      {key::memory_optimizer_state_gb, 5.0}, {key::memory_activations_gb, 0.75},
      {key::memory_comm_buffers_gb, 0.125}, {key::memory_allocator_reserve_gb, std::nullopt}};
  for (const auto& [k, v] : expected) {
    ASSERT_TRUE(whole.contains(k)) << k;
    ASSERT_TRUE(rank.contains(k)) << k;
    EXPECT_EQ(whole[k], rank[k]) << k;
    if (v) EXPECT_EQ(whole[k].get<double>(), *v) << k;
    else EXPECT_TRUE(whole[k].is_null()) << k;
  }
  const auto read = ranks_from_json(to_json(ranks));
  ASSERT_EQ(read.size(), 1u);
  EXPECT_EQ(read[0].memory.parameters, 1.25);
  EXPECT_EQ(read[0].memory.comm_buffers, 0.125);
  EXPECT_FALSE(read[0].memory.allocator_reserve);
}

TEST(RecordBlocks, UnitTimingsReadBackAndRefuseAFractionalMicroBatchCount) {
  UnitTimingsBlock t;
  t.iterations = 2;
  t.clock = "host";
  t.micro_batches_per_iteration = 2;
  t.iteration_seconds = 0.5;
  t.exposed_comm_seconds = 0.0;
  t.optimizer_seconds = 0.1;
  t.units = std::vector<UnitEntry>{{.name = "embedding", .kind = "embedding", .parameters = 10,
                                    .forward_seconds = 0.1, .backward_seconds = 0.2, .optimizer_seconds = 0.01}};
  t.communication = nullptr;
  t.parameter_shapes = std::vector<ParameterShapeEntry>{{.name = "wte", .unit = "embedding", .elements = 10}};
  Block j = to_json(t);
  EXPECT_EQ(keys_of(j), (std::vector<std::string>{"iterations", "clock", "micro_batches_per_iteration",
                                                  "iteration_seconds", "exposed_comm_seconds", "optimizer_seconds",
                                                  "units", "communication", "parameter_shapes"}));
  const UnitTimingsBlock read = unit_timings_from_json(j);
  EXPECT_EQ(read.micro_batches_per_iteration, 2);
  ASSERT_TRUE(read.units && read.units->size() == 1);
  EXPECT_EQ((*read.units)[0].backward_seconds, 0.2);
  ASSERT_TRUE(read.parameter_shapes && read.parameter_shapes->size() == 1);
  EXPECT_EQ((*read.parameter_shapes)[0].elements, 10);

  j["units"][0]["forward_seconds"] = "slow";  // the wrong type reads as absent; predict refuses it
  EXPECT_FALSE((*unit_timings_from_json(j).units)[0].forward_seconds);
  j["micro_batches_per_iteration"] = 2.5;
  try {
    unit_timings_from_json(j);
    FAIL() << "a fractional micro-batch count was read";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()), "its 'micro_batches_per_iteration' is 2.5, not a whole number");
  }
  j["micro_batches_per_iteration"] = nullptr;  // null: absent, the caller's default
  EXPECT_FALSE(unit_timings_from_json(j).micro_batches_per_iteration);
}

TEST(RecordBlocks, ResolvedConfigWritesWhatIsPresentInPlace) {
  Block config = {{"dist_backend", "?"}, {"lr", 0.1}};
  ResolvedConfig resolved;
  resolved.fsdp_min_unit_params = nullptr;
  resolved.dist_backend = "gloo";
  resolved.warnings = std::vector<std::string>{};
  put_resolved(config, resolved);
  EXPECT_EQ(keys_of(config), (std::vector<std::string>{"dist_backend", "lr", "fsdp_min_unit_params", "warnings"}));
  EXPECT_EQ(config["dist_backend"], "gloo");
  EXPECT_TRUE(config["fsdp_min_unit_params"].is_null());
  config["skip_data_sync"] = "yes";  // not a boolean: absent
  config["fsdp_min_unit_params"] = 7;
  const ResolvedConfig read = resolved_from_json(config);
  EXPECT_EQ(read.fsdp_min_unit_params.value(), 7);
  EXPECT_FALSE(read.skip_data_sync.present());
  EXPECT_EQ(read.dist_backend.value(), "gloo");
}

TEST(RecordBlocks, ReferenceProbeKeepsItsKeysAndReadsBack) {
  ReferenceProbeBlock ran;
  ran.ran = true;
  ran.what = "fp32 1024x1024x1024 matrix product (at::mm_out), 1 intra-op thread(s)";
  ran.gemm_size = 1024;
  ran.threads = 1;
  ran.when = "before the warm-up and after the measured window, outside both";
  ran.before_ms = {20.0, 22.0};
  ran.after_ms = {21.0};
  ran.within_ms = {23.0, 24.0};
  ran.repeats = 3;
  ran.median_ms = 21.0;
  ran.q1_ms = 20.5;
  ran.q3_ms = 21.5;
  ran.relative_iqr = 1.0 / 21.0;
  ran.seconds = 0.063;
  const Block j = to_json(ran);
  EXPECT_EQ(keys_of(j), (std::vector<std::string>{"ran", "what", "gemm_size", "threads", "when", "before_ms", "after_ms",
                                                  "within_ms", "repeats", "median_ms", "q1_ms", "q3_ms", "relative_iqr", "seconds"}));
  EXPECT_EQ(j["before_ms"], Block({20.0, 22.0}));
  EXPECT_EQ(j["within_ms"], Block({23.0, 24.0}));
  EXPECT_EQ(to_json(reference_probe_from_json(j)), j);  // read back, written again: the same block
  const ReferenceProbeBlock read = reference_probe_from_json(j);
  EXPECT_TRUE(read.ran);
  EXPECT_EQ(read.gemm_size, 1024);
  EXPECT_EQ(read.median_ms, 21.0);
  EXPECT_FALSE(read.why);

  ReferenceProbeBlock none;
  none.why = "a CUDA run: the probe times a host GEMM";
  const Block n = to_json(none);
  EXPECT_EQ(keys_of(n), (std::vector<std::string>{"ran", "why"}));
  EXPECT_EQ(n["ran"], false);
  EXPECT_EQ(reference_probe_from_json(n).why, none.why);
  EXPECT_FALSE(reference_probe_from_json(n).ran);

  // Absent (a record from before the probe), null, or values of the wrong type: not ran, or absent.
  EXPECT_FALSE(reference_probe_from_json(Block()).ran);
  EXPECT_FALSE(reference_probe_from_json(Block()).why);
  Block odd = j;
  odd["ran"] = "yes";
  odd["median_ms"] = "21";
  odd["before_ms"] = {20.0, "x", 22.0};
  const ReferenceProbeBlock o = reference_probe_from_json(odd);
  EXPECT_FALSE(o.ran);
  EXPECT_FALSE(o.median_ms);
  EXPECT_EQ(o.before_ms, (std::vector<double>{20.0, 22.0}));
}

}  // namespace
}  // namespace tokbench::results
