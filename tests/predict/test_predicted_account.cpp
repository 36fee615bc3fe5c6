// A prediction's time account and interval (docs/predict.md, "The predicted time account" and
// "How sure"): from a fabricated one-rank record with an account and per-iteration times, the
// predicted account's categories sum to the predicted iteration, exposed communication and the
// optimizer are the schedule's, the contention is named in other; `explain` reads a prediction
// against a measured record; a noisier record widens the interval; a record without an account
// gives a prediction that says it has none.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "account/category.hpp"
#include "account/explanation.hpp"
#include "account/time_account_json.hpp"
#include "predict/cluster.hpp"
#include "predict/comm_measurements.hpp"
#include "predict/input_spread.hpp"
#include "predict/measured_run.hpp"
#include "predict/memory_rate.hpp"
#include "predict/optimizer_model.hpp"
#include "predict/predicted_account.hpp"
#include "predict/step_copies.hpp"
#include "predict/prediction.hpp"
#include "predict/prediction_notes.hpp"
#include "results/record_explanation.hpp"
#include "results/run_record.hpp"

namespace tokbench::predict {
namespace {

using json = nlohmann::json;
using account::Category;

// A measured account whose categories (seconds per iteration) sum to `iteration_s`; the
// profiler's clock 10% slower, as a pass is.
json account_json(const std::map<std::string, double>& seconds, double iteration_s, int64_t rank = -1) {
  json categories = json::object();
  double sum = 0;
  for (const auto& [name, s] : seconds) sum += s;
  for (const Category c : account::all_categories()) {
    const std::string name(account::json_name(c));
    const double s = seconds.count(name) ? seconds.at(name) * iteration_s / sum : 0.0;
    categories[name] = {{"s", s}, {"profiled_s", s * 1.1}, {"share", s / iteration_s}, {"mfu_cost", nullptr}};
  }
  return {{"source", "kineto_cpu"},
          {"rank", rank < 0 ? json(nullptr) : json(rank)},
          {"profiled_iters", 2},
          {"iteration_s", iteration_s},
          {"profiled_iteration_s", iteration_s * 1.1},
          {"profiled_range_s", iteration_s * 1.1},
          {"categories", categories},
          {"gemm_flops_per_iter", 150000000000},
          {"attention_flops_per_iter", 10000000000},
          {"uncounted_matmuls", 0},
          {"model_flops_per_iter", 200000000000},
          {"peak_TFLOP_per_s", nullptr},
          {"peak_source", ""},
          {"matmul_s_at_ceiling", nullptr},
          {"beyond_model_mfu_cost", nullptr},
          {"mfu", nullptr},
          {"exposed_comm_source", "step"},
          {"exposed_comm_step_s", 0.0},
          {"exposed_comm_seen_s", 0.0},
          {"other_top", json::array({{{"name", "backward"}, {"profiled_s", seconds.count("other") ? 0.001 : 0.0}}})}};
}

// The measured categories of the one-rank record below (150 ms).
const std::map<std::string, double> kMeasured = {{"gemm", 0.080},     {"attention", 0.005},  {"normalization", 0.002},
                                                 {"elementwise", 0.030}, {"loss", 0.012},     {"optimizer", 0.0135},
                                                 {"data_host", 0.0005}, {"other", 0.007}};

// A pythia-14m-like run on one CPU rank of 2 threads on 2 cores, with unit timings, iteration
// times `times_ms` (after two warm-up iterations) and a time account unless `with_account` is false.
json measured_record(const std::vector<double>& times_ms, bool with_account = true, int64_t ranks = 1) {
  json units = json::array();
  units.push_back({{"name", "embedding"}, {"kind", "embedding"}, {"parameters", 6438912}, {"forward_seconds", 0.0005},
                   {"backward_seconds", 0.002}, {"optimizer_seconds", 0.006}});
  for (int i = 0; i < 6; ++i)
    units.push_back({{"name", "block." + std::to_string(i)}, {"kind", "block"}, {"parameters", 198912},
                     {"forward_seconds", 0.004}, {"backward_seconds", 0.008}, {"optimizer_seconds", 0.0002}});
  units.push_back({{"name", "head"}, {"kind", "head"}, {"parameters", 6439168}, {"forward_seconds", 0.02},
                   {"backward_seconds", 0.04}, {"optimizer_seconds", 0.006}});
  json iterations = json::array();
  for (int i = 0; i < 2; ++i) iterations.push_back({{"index", i}, {"warmup", true}, {"time_ms", 400.0}, {"loss", 11.0}});
  for (std::size_t i = 0; i < times_ms.size(); ++i)
    iterations.push_back({{"index", i + 2}, {"warmup", false}, {"time_ms", times_ms[i]}, {"loss", 10.0}});
  const std::string mode = ranks == 1 ? "none" : "ddp";
  json r = {{"average_iter_time", 150.0},
            {"model_flops", 2.0e11},
            {"model_name", "pythia-14m"},
            {"Num GPUS", ranks},
            {"Seq Len", 512},
            {"Micro BS", 1},
            {"Global BS", ranks},
            {"GA", 1},
            {"Distributed Mode", mode},
            {"compiler", "eager"},
            {"schema_version", 3},
            {"status", "ok"},
            {"executor", "eager"},
            {"mfu_precision", "fp32"},
            {"parameters", 14067712},
            {"n_layer", 6},
            {"memory_allocated_peak_GB", 0.9},
            {"world_size", ranks},
            {"device", "cpu"},
            {"device_name", "cpu"},
            {"dtype", "fp32"},
            {"checkpoint_activations", false},
            {"iterations", iterations},
            {"config",
             {{"distributed_mode", mode}, {"ddp_bucket_size_mb", 25}, {"ddp_overlap", true}, {"num_threads", 2}}},
            {"environment", {{"cpu_cores", 2}}},
            {"unit_timings",
             {{"clock", "host"},
              {"micro_batches_per_iteration", 1},
              {"optimizer_seconds", 0.0135},
              {"units", units}}}};
  r["time_account"] = with_account ? account_json(kMeasured, 0.150) : json(nullptr);
  return r;
}

const char* kCpuCluster = R"(
device = "cpu"
devices_per_node = 2
cores_per_node = 2
[intra_node]
bandwidth_GBps = 1
latency_us = 20
)";

// Copy rates given, not probed, so the step's copies are known figures: 10 GB/s alone, 8 GB/s
// with both ranks copying.
MemoryRate given_rate() {
  MemoryRate rate;
  rate.alone_bytes_per_s = 10e9;
  rate.together_bytes_per_s = 8e9;
  rate.ranks = 2;
  rate.source = "given";
  return rate;
}

ClusterInput cpu_cluster() { return {parse_cluster_toml(kCpuCluster, "cpu.toml"), std::nullopt, {}, given_rate()}; }

TargetOptions on_ranks(int64_t ranks) {
  TargetOptions t;
  t.set(&config::LauncherSection::nproc_per_node, ranks);
  t.set(&config::ParallelismSection::distributed_mode, std::string(ranks == 1 ? "none" : "ddp"));
  return t;
}

// FSDP ZeRO-3 over two ranks, a unit per transformer block.
TargetOptions zero3_on_two_ranks() {
  TargetOptions t = on_ranks(2);
  t.set(&config::ParallelismSection::distributed_mode, std::string("fsdp"))
      .set(&config::ParallelismSection::shard_mode, std::string("zero3"))
      .set(&config::ParallelismSection::bucketing_mode, std::string("block"));
  return t;
}

json predicted(const json& record, int64_t ranks) {
  return json::parse(predict(read_measured_run(record, "measured.json"), cpu_cluster(), on_ranks(ranks)).dump());
}

double seconds_of(const json& account, Category c) {
  return account["categories"][std::string(account::json_name(c))]["s"].get<double>();
}

TEST(PredictedAccount, CategoriesSumToThePredictedIteration) {
  const json p = predicted(measured_record({150, 152, 149, 151}), 2);
  ASSERT_TRUE(p["time_account"].is_object()) << p["prediction"]["time_account"].dump();
  const json& a = p["time_account"];
  const json& time_ms = p["prediction"]["time_ms"];
  const double iteration_s = p["average_iter_time"].get<double>() / 1e3;
  double sum = 0;
  for (const Category c : account::all_categories()) sum += seconds_of(a, c);
  EXPECT_NEAR(sum, iteration_s, 1e-12 * iteration_s);
  EXPECT_DOUBLE_EQ(a["iteration_s"].get<double>(), iteration_s);
  EXPECT_EQ(a["source"], kPredictedAccountSource);
  EXPECT_EQ(a["exposed_comm_source"], kExposedCommFromSchedule);
  // Exposed communication and the optimizer are the schedule's own figures.
  EXPECT_NEAR(seconds_of(a, Category::exposed_comm), time_ms["exposed_comm"].get<double>() / 1e3, 1e-12);
  EXPECT_GT(seconds_of(a, Category::exposed_comm), 0) << "two ranks on the 1 GB/s link wait for their all-reduce";
  EXPECT_NEAR(seconds_of(a, Category::optimizer), time_ms["optimizer"].get<double>() / 1e3, 1e-12);
  // Two ranks of 2 threads on 2 cores: Gloo's core slows compute while a bucket flies, and that
  // time is in the categories of the work it slowed, as a measured run books it.
  const double contention_s = time_ms["cpu_contention"].get<double>() / 1e3;
  ASSERT_GT(contention_s, 0);
  EXPECT_NEAR(p["prediction"]["time_account"]["contention_ms"].get<double>(), contention_s * 1e3, 1e-9);
  const json& contention_in = p["prediction"]["time_account"]["contention_in"];
  double spread_ms = 0;
  for (const auto& [name, ms] : contention_in.items()) spread_ms += ms.get<double>();
  EXPECT_NEAR(spread_ms, contention_s * 1e3, 1e-9) << contention_in.dump();
  // The record says what of the contention model was measured and what assumed or fitted.
  const json& contention = p["prediction"]["cpu_contention"];
  EXPECT_NE(contention["assumed_inputs"].get<std::string>().find("gloo_busy_fraction: fitted"), std::string::npos);
  EXPECT_NE(contention["measured_inputs"].get<std::string>().find("core count"), std::string::npos)
      << "the preset cluster has no compute_sharing measurement";
  // Two ranks of 2 threads and Gloo's 0.3 of a core each on 2 cores: compute keeps 2 / 2.3.
  EXPECT_NEAR(contention["comm_compute_steal"].get<double>(), 0.3 / 2.3, 1e-12);
  // The forward and backward categories keep the measured proportions and hold the predicted
  // forward and backward with the contention on it.
  // The step's copies' part of the contention is elementwise, with the copies; the rest is spread.
  const double forward_backward = time_ms["forward_backward"].get<double>() / 1e3;
  const double scale = p["prediction"]["time_account"]["forward_backward_scale"].get<double>();
  const double copy_contention_s = p["prediction"]["time_account"]["step_copies_contention_ms"].get<double>() / 1e3;
  EXPECT_GT(copy_contention_s, 0) << "DDP copies a bucket's gradients in while the one before it flies";
  EXPECT_LT(copy_contention_s, contention_s);
  const double slowed = 1.0 + (contention_s - copy_contention_s) / forward_backward;
  double scaled = 0;
  for (const Category c : {Category::gemm, Category::attention, Category::normalization, Category::elementwise,
                           Category::loss, Category::data_host, Category::device_idle, Category::other}) {
    const std::string name(account::json_name(c));
    const double measured = kMeasured.count(name) ? kMeasured.at(name) : 0.0;
    const double own = c == Category::elementwise ? time_ms["step_copies"].get<double>() / 1e3 + copy_contention_s : 0.0;
    EXPECT_NEAR(seconds_of(a, c), measured * scale * slowed + own, 1e-12) << name;
    const double own_contention = c == Category::elementwise ? copy_contention_s : 0.0;
    if (measured > 0)
      EXPECT_NEAR(contention_in.value(name, 0.0), (measured * scale * (slowed - 1) + own_contention) * 1e3, 1e-9) << name;
    scaled += seconds_of(a, c) - own;
  }
  EXPECT_NEAR(scaled, forward_backward + contention_s - copy_contention_s, 1e-12);
  // The reader every command uses takes it: shares sum to 1, categories to the iteration.
  const account::TimeAccount read = account::time_account_from_json(nlohmann::ordered_json::parse(a.dump()));
  EXPECT_FALSE(read.rank.has_value()) << "every simulated rank runs the same schedule";
  EXPECT_TRUE(p["prediction"]["time_account"]["made"].get<bool>());
}

TEST(PredictedAccount, TheStepsOwnCopiesAreElementwiseAtTheMeasuredCopyRate) {
  // DDP over two ranks: every gradient byte copied into its bucket, scaled and copied back (3
  // passes), at the rate two ranks copy at together; none at one rank.
  const json p = predicted(measured_record({150, 152, 149, 151}), 2);
  const json one = predicted(measured_record({150, 152, 149, 151}), 1);
  int64_t gradient_bytes = 4 * (6438912 + 6 * 198912 + 6439168);
  const json& copies = p["prediction"]["step_copies"];
  EXPECT_EQ(copies["bytes_per_iteration"].get<int64_t>(), 3 * gradient_bytes);
  const double expected_s = 3.0 * static_cast<double>(gradient_bytes) / 8e9;
  EXPECT_NEAR(p["prediction"]["time_ms"]["step_copies"].get<double>() / 1e3, expected_s, 1e-12);
  EXPECT_EQ(copies["memory_rate"]["source"], "given");
  EXPECT_NEAR(p["prediction"]["time_account"]["step_copies_ms"].get<double>(), expected_s * 1e3, 1e-9);
  EXPECT_EQ(one["prediction"]["time_ms"]["step_copies"].get<double>(), 0.0) << "one rank has no buckets";
  // Elementwise holds them beyond its scaled measured share and its part of the contention (the
  // spread part and the copies' own).
  const double scale = p["prediction"]["time_account"]["forward_backward_scale"].get<double>();
  const double contention_s = p["prediction"]["time_account"]["contention_in"].value("elementwise", 0.0) / 1e3;
  EXPECT_NEAR(seconds_of(p["time_account"], Category::elementwise),
              kMeasured.at("elementwise") * scale + contention_s + expected_s, 1e-12);
  // ZeRO-3 on Gloo: more than DDP (flat gradients zeroed, gathers staged through full buffers).
  const TargetOptions zero3 = zero3_on_two_ranks();
  const json z = json::parse(
      predict(read_measured_run(measured_record({150, 152, 149, 151}), "measured.json"), cpu_cluster(), zero3).dump());
  EXPECT_GT(z["prediction"]["step_copies"]["bytes_per_iteration"].get<int64_t>(), 3 * gradient_bytes);
  // No rate for two ranks and no probe: counted, not timed, and said so (the same runs give the
  // same prediction); with the command's probe hook, the probe is asked for the node's ranks.
  const MeasuredRun run = read_measured_run(measured_record({150, 152, 149, 151}), "measured.json");
  ClusterInput bare = cpu_cluster();
  bare.memory_rate.reset();
  const json untimed = json::parse(predict(run, bare, on_ranks(2)).dump());
  EXPECT_EQ(untimed["prediction"]["step_copies"]["bytes_per_iteration"].get<int64_t>(), 3 * gradient_bytes);
  EXPECT_TRUE(untimed["prediction"]["step_copies"]["ms"].is_null());
  EXPECT_EQ(untimed["prediction"]["time_ms"]["step_copies"].get<double>(), 0.0);
  int64_t asked = 0;
  bare.measure_memory = [&](int64_t ranks) {
    asked = ranks;
    return given_rate();
  };
  const json probed = json::parse(predict(run, bare, on_ranks(2)).dump());
  EXPECT_EQ(asked, 2);
  EXPECT_NEAR(probed["prediction"]["time_ms"]["step_copies"].get<double>() / 1e3, expected_s, 1e-12);
}

TEST(PredictedAccount, AFillIsTimedAtHalfACopyAndAnAccumulationAtACopy) {
  // ZeRO-3 over two ranks on Gloo, GA 1, a unit per block: per unit and micro-batch two gathers
  // (the full buffer zeroed, the shard copied in) and one reduce-scatter (the flat gradient
  // zeroed, every gradient accumulated into it, the shard kept), and the shard scaled once: 3
  // full buffers zeroed, 4 shards (2 full buffers) copied, 1 full buffer accumulated into. A
  // zero_ writes its bytes without reading them, half a memcpy's traffic; an accumulation is
  // timed as a copy.
  const TargetOptions zero3 = zero3_on_two_ranks();
  const json z = json::parse(
      predict(read_measured_run(measured_record({150, 152, 149, 151}), "measured.json"), cpu_cluster(), zero3).dump());
  const int64_t gradient_bytes = 4 * (6438912 + 6 * 198912 + 6439168);
  const json& copies = z["prediction"]["step_copies"];
  EXPECT_EQ(copies["filled_bytes"].get<int64_t>(), 3 * gradient_bytes);
  EXPECT_EQ(copies["copied_bytes"].get<int64_t>(), 2 * gradient_bytes);
  EXPECT_EQ(copies["added_bytes"].get<int64_t>(), gradient_bytes);
  EXPECT_EQ(copies["bytes_per_iteration"].get<int64_t>(), 6 * gradient_bytes);
  EXPECT_EQ(copies["fill_cost_of_copy"].get<double>(), 0.5);
  EXPECT_EQ(copies["add_cost_of_copy"].get<double>(), 1.0);
  // 2 G copied + 3 G zeroed at half + 1 G accumulated at one: 4.5 G at the copy rate, not 6 G.
  const double expected_s = 4.5 * static_cast<double>(gradient_bytes) / 8e9;
  EXPECT_NEAR(z["prediction"]["time_ms"]["step_copies"].get<double>() / 1e3, expected_s, 1e-12);
  // DDP fills nothing and accumulates nothing into its buckets: its three passes are copies and
  // an in-place scale, at the copy rate.
  const json d = predicted(measured_record({150, 152, 149, 151}), 2);
  EXPECT_EQ(d["prediction"]["step_copies"]["filled_bytes"].get<int64_t>(), 0);
  EXPECT_EQ(d["prediction"]["step_copies"]["added_bytes"].get<int64_t>(), 0);
  EXPECT_EQ(d["prediction"]["step_copies"]["copied_bytes"].get<int64_t>(), 3 * gradient_bytes);
}

TEST(StepCopies, TheGradientsAreAccumulatedOncePerIterationBeyondAOneRankRun) {
  // The one-rank run accumulates in place from its second micro-batch on too: whatever the GA,
  // FSDP's flat gradients take one accumulation pass over the full gradient per iteration more,
  // spread over the reduce-scatter's calls; the fills stay one per call.
  CommPlan plan;
  plan.layout.units.push_back(parallel::CommUnit{});
  plan.layout.units.back().elements = 1000;
  plan.layout.units.back().padded_elements = 1000;
  for (const int64_t ga : {1, 2, 4}) {
    plan.collectives = {parallel::PlannedCollective{}};
    plan.collectives[0].purpose = parallel::CommPurpose::reduce_gradients;
    plan.collectives[0].comm_unit = 0;
    plan.collectives[0].per_iteration = ga;
    const StepCopyBytes total = placed_copy_bytes(plan, 2, /*gloo=*/true).per_iteration(plan);
    const int64_t full = plan.layout.units[0].padded_bytes();
    EXPECT_EQ(total.added, full) << "GA " << ga;
    EXPECT_EQ(total.filled, ga * full) << "GA " << ga;
  }
}

TEST(PredictedOptimizer, FollowsTheTensorsAndElementsEachRankUpdates) {
  // 50 us per tensor, 1 ns per element (given, not probed); two ranks copying share memory
  // bandwidth 10/8 = 1.25x, which slows the per-element part only.
  ClusterInput in = cpu_cluster();
  in.optimizer_cost = OptimizerCostRates{50e-6, 1e-9, "given"};
  const MeasuredRun run = read_measured_run(measured_record({150, 152, 149, 151}), "measured.json");
  const double measured_s = 0.0135;
  const auto optimizer_s = [](const json& p) { return p["prediction"]["time_ms"]["optimizer"].get<double>() / 1e3; };
  // The per-tensor part scales as compute (here 2 ranks of 2 threads on 2 cores: 2x).
  const auto cost = [](const json& work, double tensor_factor, double element_factor) {
    return 50e-6 * work["tensors"].get<double>() * tensor_factor +
           1e-9 * work["elements"].get<double>() * element_factor;
  };
  // DDP: the same tensors and elements as the one-rank run; the per-element part 1.25x.
  const json ddp = json::parse(predict(run, in, on_ranks(2)).dump());
  const json& d = ddp["prediction"]["optimizer"];
  EXPECT_EQ(d["predicted_work"], d["measured_work"]);
  EXPECT_EQ(d["measured_work"]["tensors"].get<int64_t>(), 8) << "no parameter_shapes: one tensor per timed unit";
  EXPECT_DOUBLE_EQ(d["per_element_factor"].get<double>(), 1.25);
  const double compute = ddp["prediction"]["cpu_contention"]["compute_time_factor"].get<double>();
  EXPECT_DOUBLE_EQ(compute, 2.0);
  EXPECT_DOUBLE_EQ(d["per_tensor_factor"].get<double>(), compute);
  EXPECT_NEAR(optimizer_s(ddp), measured_s * cost(d["measured_work"], compute, 1.25) / cost(d["measured_work"], 1, 1),
              1e-12);
  // ZeRO-3 over two ranks: one flat shard per FSDP unit, half the (padded) elements; the
  // per-tensor part follows the units, not the elements.
  const TargetOptions zero3 = zero3_on_two_ranks();
  const json z = json::parse(predict(run, in, zero3).dump());
  const json& o = z["prediction"]["optimizer"];
  std::set<std::string> unit_names;  // the FSDP units, as the plan's collectives name them
  for (const auto& c : z["prediction"]["communication"]["collectives"]) unit_names.insert(c["unit"].get<std::string>());
  const auto units = static_cast<int64_t>(unit_names.size());
  ASSERT_GT(units, 1);
  EXPECT_EQ(o["predicted_work"]["tensors"].get<int64_t>(), units);
  EXPECT_NEAR(o["predicted_work"]["elements"].get<double>(), o["measured_work"]["elements"].get<double>() / 2, units);
  EXPECT_NEAR(optimizer_s(z), measured_s * cost(o["predicted_work"], compute, 1.25) / cost(o["measured_work"], 1, 1),
              1e-12);
  // Without measured costs: the elements alone, as before (and said so).
  const json e = json::parse(predict(run, cpu_cluster(), zero3).dump());
  EXPECT_NEAR(optimizer_s(e),
              measured_s * 1.25 * e["prediction"]["optimizer"]["predicted_work"]["elements"].get<double>() /
                  e["prediction"]["optimizer"]["measured_work"]["elements"].get<double>(),
              1e-12);
  EXPECT_NE(e["prediction"]["optimizer"]["costs_from"].get<std::string>().find("assumed"), std::string::npos);
}

TEST(MemoryRate, TheProbeMeasuresPositiveRatesAndASlowdownOfAtLeastOne) {
  const MemoryRate rate = measure_memory_rate(2, 8 << 20, 3);
  EXPECT_GT(rate.alone_bytes_per_s, 0);
  EXPECT_GT(rate.together_bytes_per_s, 0);
  EXPECT_GE(rate.sharing_slowdown(), 1.0);
  EXPECT_GT(rate.pair_slowdown, 0);
  EXPECT_DOUBLE_EQ(rate.sharing_slowdown(), std::max(1.0, rate.pair_slowdown)) << "the pairs' median, not the medians' ratio";
  EXPECT_EQ(to_json(rate)["source"], "probe");
  EXPECT_EQ(rate.blocks, kProbeBlocks);
  ASSERT_EQ(rate.block_pair_slowdowns.size(), static_cast<std::size_t>(kProbeBlocks));
  EXPECT_DOUBLE_EQ(rate.pair_slowdown, *std::min_element(rate.block_pair_slowdowns.begin(), rate.block_pair_slowdowns.end()));
}

TEST(MemoryRate, ABlockANeighbourHeldIsNotTheOneTaken) {
  // Three blocks of three pairs; the second's together copies took 1.8x alone (a core held), the
  // others 1.05x and 1.1x: the figures are the first block's.
  const std::vector<ProbeBlock> blocks = {{{0.010, 0.010, 0.010}, {0.0105, 0.0105, 0.0105}},
                                          {{0.010, 0.011, 0.010}, {0.018, 0.0198, 0.018}},
                                          {{0.012, 0.012, 0.012}, {0.0132, 0.0132, 0.0132}}};
  const MemoryRate rate = rate_from_blocks(blocks, 2, 1'000'000);
  EXPECT_NEAR(rate.pair_slowdown, 1.05, 1e-12);
  EXPECT_NEAR(rate.alone_bytes_per_s, 1e8, 1e-3);
  EXPECT_NEAR(rate.together_bytes_per_s, 1e6 / 0.0105, 1e-3);
  ASSERT_EQ(rate.block_pair_slowdowns.size(), 3u);
  EXPECT_NEAR(rate.block_pair_slowdowns[1], 1.8, 1e-12);
  EXPECT_EQ(rate.repeats, 3);
  EXPECT_THROW(rate_from_blocks({}, 2, 1'000'000), std::invalid_argument);
}

TEST(PredictedAccount, ExplainSaysCategoryByCategoryWhereAPredictionDiffers) {
  // The prediction at the measured scale against the record it came from, and a two-rank
  // prediction against a measured two-rank record: each explained as two runs are.
  const json one = measured_record({150, 152, 149, 151});
  const json p1 = predicted(one, 1);
  const account::Explanation e =
      results::explain_records(results::record_from_json(one), results::record_from_json(p1), "measured.json", "p.json");
  EXPECT_EQ(e.base_name, "eager");
  EXPECT_EQ(e.run_name, "eager predicted");
  results::RunRecord swept = results::record_from_json(p1);  // a sweep's predicted column names itself
  swept.compiler = std::string("eager predicted");
  EXPECT_EQ(results::run_label(swept), "eager predicted (eager)");
  double differences = 0;
  for (const Category c : account::all_categories()) differences += e.difference(c);
  EXPECT_NEAR(differences, e.iteration_difference(), 1e-12);
  // The unit timings hold 134.5 ms of the measured account's 136.5 ms of forward and backward
  // (150 less the optimizer's 13.5): the prediction is faster in every forward and backward
  // category, and its optimizer is the unit timings' own.
  EXPECT_LT(e.difference(Category::gemm), 0);
  EXPECT_NEAR(e.run_seconds[account::index_of(Category::optimizer)], 0.0135, 1e-12);

  json two = measured_record({300, 310, 305, 302}, true, 2);
  two["average_iter_time"] = 300.0;
  auto seconds = kMeasured;
  seconds["exposed_comm"] = 0.1;
  two["time_account"] = account_json(seconds, 0.300, 0);
  const json p2 = predicted(one, 2);
  const account::Explanation e2 =
      results::explain_records(results::record_from_json(p2), results::record_from_json(two), "p2.json", "two.json");
  std::ostringstream text;
  account::write_explanation(e2, text);
  for (const char* label : {"GEMMs", "attention", "normalization", "exposed communication", "optimizer", "iteration"})
    EXPECT_NE(text.str().find(label), std::string::npos) << label << " in\n" << text.str();
  EXPECT_NEAR(e2.base_seconds[account::index_of(Category::exposed_comm)],
              p2["prediction"]["time_ms"]["exposed_comm"].get<double>() / 1e3, 1e-12);
}

TEST(PredictedAccount, ARecordWithoutAnAccountGivesAPredictionThatSaysSo) {
  const json p = predicted(measured_record({150, 152, 149, 151}, false), 2);
  ASSERT_TRUE(p.contains("time_account"));
  EXPECT_TRUE(p["time_account"].is_null()) << "no account is invented";
  EXPECT_FALSE(p["prediction"]["time_account"]["made"].get<bool>());
  EXPECT_NE(p["prediction"]["time_account"]["why"].get<std::string>().find("has no time_account"), std::string::npos);
  // explain names why: the prediction's source had none.
  try {
    results::explain_records(results::record_from_json(p), results::record_from_json(p), "p.json", "p.json");
    FAIL() << "a prediction without an account explained";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("the prediction has no time account"), std::string::npos) << e.what();
  }
  // The rest of the prediction is made as before.
  EXPECT_GT(p["average_iter_time"].get<double>(), 0);
}

TEST(InputSpread, MedianQuartilesAndMadOfTheMeasuredIterations) {
  std::string why;
  // The warm-up iterations are not read; an outlier moves neither the median nor the MAD much.
  const auto s = iteration_spread(nlohmann::ordered_json::parse(measured_record({1, 2, 3, 4, 100})["iterations"].dump()), why);
  ASSERT_TRUE(s.has_value()) << why;
  EXPECT_EQ(s->iterations, 5);
  EXPECT_DOUBLE_EQ(s->median_ms, 3);
  EXPECT_DOUBLE_EQ(s->q1_ms, 2);
  EXPECT_DOUBLE_EQ(s->q3_ms, 4);
  EXPECT_DOUBLE_EQ(s->mad_ms, 1);
  EXPECT_DOUBLE_EQ(s->relative_iqr(), 2.0 / 3.0);
  // One measured iteration: no spread, and why.
  EXPECT_FALSE(iteration_spread(nlohmann::ordered_json::parse(measured_record({150})["iterations"].dump()), why));
  EXPECT_NE(why.find("1 measured iteration"), std::string::npos) << why;
}

// A 2-rank CPU comm document: all-reduce from 1 kB to 100 MB at 1 GB/s, every call between 0.8
// and 1.5 of its mean (or none recorded), and its compute sharing probe (slowdown 1.2, quartiles
// 1.1 and 1.4, or no quartiles) for ranks of the record's 2 threads.
ClusterInput measured_comm(bool with_spread, const std::string& gloo_busy = "", const std::string& beside = "") {
  std::string results;
  for (double bytes = 1e3; bytes <= 1e8; bytes *= 10) {
    const double us = 20 + bytes / 1e3;
    results += (results.empty() ? "" : ",") +
               nlohmann::json({{"collective", "all_reduce"}, {"size_bytes", bytes}, {"time_us", us}}).dump();
    if (with_spread) {
      results.pop_back();
      results += ",\"min_time_us\":" + std::to_string(0.8 * us) + ",\"max_time_us\":" + std::to_string(1.5 * us) + "}";
    }
  }
  const std::string quartiles = with_spread ? R"(, "slowdown_q1": 1.1, "slowdown_q3": 1.4)" : "";
  const std::string doc = R"({"schema": "tokbench-comm", "schema_version": 1, "backend": "gloo", "device": "cpu",
      "world_size": 2, "nnodes": 1, "nproc_per_node": 2, "threads_per_rank": 2, "environment": {"cpu_cores": 2},
      "compute_sharing": {"ranks_per_node": 2, "threads_per_rank": 2, "slowdown": 1.2)" + quartiles +
      (beside.empty() ? "" : R"(, "beside_collective": )" + beside) + R"(},)" +
      (gloo_busy.empty() ? "" : R"("gloo_cpu_busy": {"fraction": )" + gloo_busy + "},") + R"(
      "results": [)" + results + "]}";
  ClusterInput in = measured_cluster(parse_comm_document(doc, "comm.json"));
  in.memory_rate = given_rate();
  return in;
}

TEST(PredictedAccount, GloosBusyFractionIsTheCommDocumentsWhereMeasured) {
  const MeasuredRun run = read_measured_run(measured_record({148, 150, 151, 153}), "measured.json");
  const json fitted = json::parse(predict(run, measured_comm(false), on_ranks(2)).dump())["prediction"]["cpu_contention"];
  const json measured =
      json::parse(predict(run, measured_comm(false, "0.8"), on_ranks(2)).dump())["prediction"]["cpu_contention"];
  // An older document: the fitted fallback, said to be fitted.
  EXPECT_DOUBLE_EQ(fitted["factors"]["gloo_busy_fraction"].get<double>(), 0.3);
  EXPECT_NE(fitted["assumed_inputs"].get<std::string>().find("gloo_busy_fraction: fitted"), std::string::npos);
  EXPECT_FALSE(fitted.contains("gloo_busy_measured"));
  // A document that measured it: its figure, said to be measured, and the steal follows it
  // (2 ranks x 2 threads on 2 cores, 0.8 of a core each: compute keeps 2 / 2.8).
  EXPECT_DOUBLE_EQ(measured["factors"]["gloo_busy_fraction"].get<double>(), 0.8);
  EXPECT_NE(measured["measured_inputs"].get<std::string>().find("gloo_busy_fraction: tokbench comm's gloo_cpu_busy"),
            std::string::npos)
      << measured["measured_inputs"];
  EXPECT_EQ(measured["assumed_inputs"].get<std::string>().find("gloo_busy_fraction"), std::string::npos);
  EXPECT_DOUBLE_EQ(measured["gloo_busy_measured"]["fraction"].get<double>(), 0.8);
  EXPECT_NEAR(measured["comm_compute_steal"].get<double>(), 0.8 / 2.8, 1e-12);
}

// Where ranks time-slice the cores (the helper's document: 2 ranks of 2 threads on 2 cores), a
// document's busy fraction is the share its collective got, not what it asks for: a document of
// the same machine measured with a core per rank's threads, given after it, is preferred and
// named; given alone, the time-sliced figure is used and the record says it is a lower bound.
TEST(PredictedAccount, GloosBusyFractionPrefersADocumentWhoseRanksHadTheirOwnCores) {
  const MeasuredRun run = read_measured_run(measured_record({148, 150, 151, 153}), "measured.json");
  ClusterInput in = measured_comm(false, "0.6");
  const json sliced = json::parse(predict(run, in, on_ranks(2)).dump())["prediction"]["cpu_contention"];
  CommMeasurements own_cores = *in.measured;
  own_cores.source = "own-cores.json";
  own_cores.threads_per_rank = 1;
  own_cores.gloo_busy_fraction = 0.9;
  in.group_measurements.push_back(own_cores);
  const json both = json::parse(predict(run, in, on_ranks(2)).dump())["prediction"]["cpu_contention"];

  EXPECT_DOUBLE_EQ(sliced["gloo_busy_measured"]["fraction"].get<double>(), 0.6);
  const std::string sliced_from = sliced["gloo_busy_measured"]["from"].get<std::string>();
  EXPECT_NE(sliced_from.find("a lower bound"), std::string::npos) << sliced_from;
  EXPECT_NE(sliced_from.find("a core per rank's threads"), std::string::npos) << sliced_from;
  EXPECT_DOUBLE_EQ(both["gloo_busy_measured"]["fraction"].get<double>(), 0.9);
  EXPECT_DOUBLE_EQ(both["factors"]["gloo_busy_fraction"].get<double>(), 0.9);
  const std::string both_from = both["gloo_busy_measured"]["from"].get<std::string>();
  EXPECT_NE(both_from.find("own-cores.json"), std::string::npos) << both_from;
  EXPECT_EQ(both_from.find("lower bound"), std::string::npos) << both_from;
  // The steal follows the demand: 2 ranks x 2 threads on 2 cores, 0.9 of a core each.
  EXPECT_NEAR(both["comm_compute_steal"].get<double>(), 0.9 / 2.9, 1e-12);
}

// Where the comm document timed its GEMM beside a running all-reduce on the predicted placement,
// the prediction records it beside the model's steal and collective rate, as a check, and keeps
// the model's (the measurement moved more between documents than the model's input); where its
// all-reduce ended before the GEMM in most repeats, there is nothing to check against.
TEST(PredictedAccount, TheCommDocumentsGemmBesideACollectiveChecksTheModelsSteal) {
  const MeasuredRun run = read_measured_run(measured_record({148, 150, 151, 153}), "measured.json");
  const auto contention = [&](const std::string& beside) {
    return json::parse(predict(run, measured_comm(false, "0.8", beside), on_ranks(2)).dump());
  };
  const json model = contention("");
  const json checked =
      contention(R"({"steal": 0.55, "collective_rate": 0.5, "covered_repeats": 15, "repeats": 15})");
  const json& c = checked["prediction"]["cpu_contention"];
  ASSERT_TRUE(c.contains("steal_check")) << c.dump();
  EXPECT_DOUBLE_EQ(c["steal_check"]["measured_steal"].get<double>(), 0.55);
  EXPECT_DOUBLE_EQ(c["steal_check"]["measured_collective_rate"].get<double>(), 0.5);
  // 2 ranks x 2 threads on 2 cores, 0.8 of a core each: compute keeps 2 / 2.8.
  EXPECT_NEAR(c["steal_check"]["model_steal"].get<double>(), 0.8 / 2.8, 1e-12);
  EXPECT_NEAR(c["comm_compute_steal"].get<double>(), 0.8 / 2.8, 1e-12) << "the model's steal is used";
  EXPECT_EQ(c["steal_check"]["model_collective_rate"], c["comm_rate_beside_compute"]);
  EXPECT_EQ(checked["average_iter_time"], model["average_iter_time"]);
  bool said = false;
  for (const auto& line : checked["prediction"]["assumptions"])
    said = said || line.get<std::string>().find("checked: `tokbench comm` measured its GEMM beside") != std::string::npos;
  EXPECT_TRUE(said) << checked["prediction"]["assumptions"].dump();
  EXPECT_FALSE(model["prediction"]["cpu_contention"].contains("steal_check"));

  const json uncovered =
      contention(R"({"steal": 0.55, "collective_rate": 0.5, "covered_repeats": 7, "repeats": 15})");
  EXPECT_FALSE(uncovered["prediction"]["cpu_contention"].contains("steal_check"));
  EXPECT_EQ(uncovered["average_iter_time"], model["average_iter_time"]);
}

TEST(InputSpread, TheIntervalCarriesTheCommDocumentsSpread) {
  const MeasuredRun run = read_measured_run(measured_record({148, 150, 151, 153}), "measured.json");
  const json p = json::parse(predict(run, measured_comm(true), on_ranks(2)).dump());
  const json plain = json::parse(predict(run, measured_comm(false), on_ranks(2)).dump());
  EXPECT_EQ(p["average_iter_time"], plain["average_iter_time"]) << "a spread does not move the prediction";
  const json& interval = p["prediction"]["interval_ms"];
  // The run's iterations, the collectives, the compute sharing and (2 ranks of 2 threads time-slice
  // 2 cores) the ranks' step.
  ASSERT_EQ(interval["parts"].size(), 4u) << interval.dump();
  const json& time_ms = p["prediction"]["time_ms"];
  // The collectives' part: the communication that reaches the iteration, moved by the fastest
  // call's distance below the mean (0.2) either side; the slowest call (1.5x) is an outlier.
  const double reaching = time_ms["exposed_comm"].get<double>() + time_ms["cpu_contention"].get<double>();
  ASSERT_GT(reaching, 0);
  EXPECT_NEAR(interval["parts"][1]["below_ms"].get<double>(), 0.2 * reaching, 1e-6 * reaching);
  EXPECT_NEAR(interval["parts"][1]["above_ms"].get<double>(), 0.2 * reaching, 1e-6 * reaching);
  // The compute sharing's part: forward and backward by its quartiles over its median.
  const double fb = time_ms["forward_backward"].get<double>();
  EXPECT_NEAR(interval["parts"][2]["below_ms"].get<double>(), fb * (1 - 1.1 / 1.2), 1e-9 * fb);
  EXPECT_NEAR(interval["parts"][2]["above_ms"].get<double>(), fb * (1.4 / 1.2 - 1), 1e-9 * fb);
  // The ranks' step: the prediction is the midpoint of the lockstep and the cores' budget, and
  // its part reaches both.
  const double iteration = p["average_iter_time"].get<double>();
  const json& contention = p["prediction"]["cpu_contention"];
  const double lockstep = contention["ranks_out_of_step"]["lockstep_iteration_ms"].get<double>();
  const double budget = contention["cores_budget"]["iteration_ms"].get<double>();
  ASSERT_LT(budget, lockstep);
  EXPECT_NEAR(iteration, (lockstep + budget) / 2, 1e-9);
  EXPECT_NEAR(interval["parts"][3]["below_ms"].get<double>(), iteration - budget, 1e-9);
  EXPECT_NEAR(interval["parts"][3]["above_ms"].get<double>(), lockstep - iteration, 1e-9);
  bool said = false;
  for (const auto& line : p["prediction"]["assumptions"])
    said = said || line.get<std::string>().find("The prediction is their midpoint") != std::string::npos;
  EXPECT_TRUE(said) << p["prediction"]["assumptions"].dump();
  EXPECT_NE(prediction_notes({p}).find("The prediction is their midpoint"), std::string::npos);
  // A budget at or above the lockstep leaves the lockstep's iteration: the note reads which end
  // from the record's figures, as the assumption does.
  json at_lockstep = p;
  at_lockstep["prediction"]["cpu_contention"]["ranks_out_of_step"]["iteration_ms"] = lockstep;
  const std::string lockstep_notes = prediction_notes({at_lockstep});
  EXPECT_EQ(lockstep_notes.find("The prediction is their midpoint"), std::string::npos) << lockstep_notes;
  EXPECT_NE(lockstep_notes.find("the prediction is the lockstep's"), std::string::npos) << lockstep_notes;
  // The sides add in quadrature.
  const auto expect_quadrature = [](const json& p) {
    const json& interval = p["prediction"]["interval_ms"];
    double below = 0, above = 0;
    for (const auto& part : interval["parts"]) {
      below += part["below_ms"].get<double>() * part["below_ms"].get<double>();
      above += part["above_ms"].get<double>() * part["above_ms"].get<double>();
    }
    const double iteration = p["average_iter_time"].get<double>();
    EXPECT_NEAR(interval["low"].get<double>(), iteration - std::sqrt(below), 1e-9);
    EXPECT_NEAR(interval["high"].get<double>(), iteration + std::sqrt(above), 1e-9);
  };
  expect_quadrature(p);
  // print's note names each source beside the run's spread.
  const std::string notes = prediction_notes({p});
  EXPECT_NE(notes.find("by the measured run's spread (4 iterations"), std::string::npos) << notes;
  EXPECT_NE(notes.find("and the comm document's collective times"), std::string::npos) << notes;
  EXPECT_NE(notes.find(", the comm document's compute sharing"), std::string::npos) << notes;
  // No measured iterations: no interval, whatever the comm document holds.
  const json bare = json::parse(
      predict(read_measured_run(measured_record({}), "measured.json"), measured_comm(true), on_ranks(2)).dump());
  EXPECT_TRUE(bare["prediction"]["interval_ms"].is_null());
  // A document without the spread gives its parts no width: the run's and the ranks' step's remain.
  const json& narrow = plain["prediction"]["interval_ms"];
  ASSERT_EQ(narrow["parts"].size(), 4u) << narrow["parts"].dump(1);
  for (const int i : {1, 2}) {
    EXPECT_EQ(narrow["parts"][i]["below_ms"].get<double>(), 0.0) << narrow["parts"][i].dump();
    EXPECT_EQ(narrow["parts"][i]["above_ms"].get<double>(), 0.0) << narrow["parts"][i].dump();
  }
  EXPECT_EQ(narrow["parts"][3], interval["parts"][3]);
  expect_quadrature(plain);
  EXPECT_GT(interval["high"].get<double>() - interval["low"].get<double>(),
            1.2 * (narrow["high"].get<double>() - narrow["low"].get<double>()));
}

TEST(InputSpread, TheIntervalWidensWithANoisierRecord) {
  // The run's own part (the first); the prediction's 2 ranks of 2 threads time-slice 2 cores, so
  // the ranks' step adds a part of the same width to each.
  const auto run_width = [](const json& p) {
    const json& part = p["prediction"]["interval_ms"]["parts"][0];
    return part["below_ms"].get<double>() + part["above_ms"].get<double>();
  };
  const json steady = predicted(measured_record({150, 150, 150, 150}), 2);
  const json quiet = predicted(measured_record({148, 150, 151, 153}), 2);
  const json noisy = predicted(measured_record({120, 150, 170, 210}), 2);
  EXPECT_DOUBLE_EQ(run_width(steady), 0) << "iterations that agree give the prediction itself";
  EXPECT_GT(run_width(quiet), 0);
  EXPECT_GT(run_width(noisy), 5 * run_width(quiet));
  for (const json* p : {&steady, &quiet, &noisy}) {
    const double iteration = (*p)["average_iter_time"].get<double>();
    EXPECT_LE((*p)["prediction"]["interval_ms"]["low"].get<double>(), iteration);
    EXPECT_GE((*p)["prediction"]["interval_ms"]["high"].get<double>(), iteration);
    EXPECT_EQ((*p)["average_iter_time"], steady["average_iter_time"]) << "the spread does not move the prediction";
    EXPECT_EQ((*p)["prediction"]["interval_ms"]["parts"][1], steady["prediction"]["interval_ms"]["parts"][1]);
  }
  // The rule: the compute moves by the quartiles relative to the median.
  const double compute = noisy["prediction"]["time_ms"]["compute"].get<double>();
  const json& s = noisy["prediction"]["input_spread"];
  EXPECT_NEAR(noisy["prediction"]["interval_ms"]["parts"][0]["above_ms"].get<double>(),
              compute * (s["q3_ms"].get<double>() / s["median_ms"].get<double>() - 1), 1e-9);
  // No measured iterations: no interval, and the spread says why.
  const json bare = predicted(measured_record({}), 2);
  EXPECT_TRUE(bare["prediction"]["interval_ms"].is_null());
  EXPECT_NE(bare["prediction"]["input_spread"]["why"].get<std::string>().find("0 measured iteration"),
            std::string::npos);
}

// Issue 37, item 2: the units are read at the measured window's median, so two one-rank runs
// whose few-iteration unit-timing passes caught the machine at different moments (150 and
// 180 ms per pass iteration) but whose windows agree predict the same iteration.
TEST(InputSpread, TheUnitsAreReadAtTheWindowsMedian) {
  // The pass at `pass_s` per iteration, every unit's time in proportion (a pass 20% slower
  // measures every unit 20% slower).
  const auto with_pass = [](json r, double pass_s) {
    const double k = pass_s / 0.150;
    for (auto& u : r["unit_timings"]["units"])
      for (const char* key : {"forward_seconds", "backward_seconds", "optimizer_seconds"}) u[key] = k * u[key].get<double>();
    r["unit_timings"]["optimizer_seconds"] = k * r["unit_timings"]["optimizer_seconds"].get<double>();
    r["unit_timings"]["iteration_seconds"] = pass_s;
    r["unit_timings"]["iterations"] = 2;
    return r;
  };
  const std::vector<double> window = {150, 149, 151, 150, 152, 148, 250};  // median 150, one slow outlier
  const json calm = predicted(with_pass(measured_record(window), 0.150), 2);
  const json busy = predicted(with_pass(measured_record(window), 0.180), 2);
  const json& level = busy["prediction"]["unit_timings_level"];
  ASSERT_TRUE(level["rescaled"].get<bool>()) << level.dump();
  EXPECT_DOUBLE_EQ(level["scale"].get<double>(), 150.0 / 180.0);
  EXPECT_EQ(level["window_iterations"], 7);
  EXPECT_DOUBLE_EQ(calm["prediction"]["unit_timings_level"]["scale"].get<double>(), 1.0);
  EXPECT_NEAR(busy["average_iter_time"].get<double>(), calm["average_iter_time"].get<double>(),
              1e-9 * calm["average_iter_time"].get<double>());
  // A window twice as slow doubles every unit's compute.
  std::vector<double> slower;
  for (const double t : window) slower.push_back(2 * t);
  const json twice = predicted(with_pass(measured_record(slower), 0.150), 2);
  EXPECT_NEAR(twice["prediction"]["time_ms"]["forward_backward"].get<double>(),
              2 * calm["prediction"]["time_ms"]["forward_backward"].get<double>(), 1e-9);
  EXPECT_NEAR(twice["prediction"]["time_ms"]["optimizer"].get<double>(),
              2 * calm["prediction"]["time_ms"]["optimizer"].get<double>(), 1e-9);
  // Fewer than kMinLevelIterations measured iterations: the pass's own level, and why.
  const json few = predicted(with_pass(measured_record({300, 300, 300, 300}), 0.150), 2);
  EXPECT_FALSE(few["prediction"]["unit_timings_level"]["rescaled"].get<bool>());
  EXPECT_NE(few["prediction"]["unit_timings_level"]["why"].get<std::string>().find("4 measured iteration"),
            std::string::npos);
  EXPECT_NEAR(few["prediction"]["time_ms"]["forward_backward"].get<double>(),
              calm["prediction"]["time_ms"]["forward_backward"].get<double>(), 1e-9);
}

}  // namespace
}  // namespace tokbench::predict

namespace tokbench::predict {
namespace {

// The reference probe a one-rank run records (docs/run.md, "The reference probe"): products of
// `median_ms`, with quartiles `spread` either side, on `threads` threads.
json probe_block(double median_ms, double spread = 0, int64_t threads = 2, int64_t size = 1024) {
  return {{"ran", true},        {"gemm_size", size},
          {"threads", threads}, {"repeats", 8},
          {"median_ms", median_ms}, {"q1_ms", median_ms - spread},
          {"q3_ms", median_ms + spread}};
}

// The comm document of measured_comm with its reference GEMM alone at `alone_ms`, the run's
// compute read at `level` (the document's moment unless said).
ClusterInput comm_with_alone(double alone_ms, int64_t threads = 2, ComputeLevel level = ComputeLevel::comm_document) {
  ClusterInput in = measured_comm(false);
  in.compute_level = level;
  in.measured->compute_sharing->alone_seconds = alone_ms / 1e3;
  in.measured->compute_sharing->gemm_size = 1024;
  in.measured->compute_sharing->threads_per_rank = threads;
  return in;
}

// `r` as measured at a moment `k` times slower: every iteration, unit and the pass.
json slower_by(json r, double k) {
  for (auto& it : r["iterations"]) it["time_ms"] = k * it["time_ms"].get<double>();
  for (auto& u : r["unit_timings"]["units"])
    for (const char* key : {"forward_seconds", "backward_seconds", "optimizer_seconds"}) u[key] = k * u[key].get<double>();
  r["unit_timings"]["optimizer_seconds"] = k * r["unit_timings"]["optimizer_seconds"].get<double>();
  return r;
}

json predicted_with(const json& record, const ClusterInput& in) {
  return json::parse(predict(read_measured_run(record, "measured.json"), in, on_ranks(2)).dump());
}

// Issue 37, item 2: two one-rank runs at two moments of the machine, the second 10% slower in
// everything including its reference GEMM, predict the same iteration with one comm document:
// each run's compute is carried to the document's moment by the ratio of the two GEMMs.
TEST(ReferenceLevel, TwoRunsAtTwoMomentsPredictTheSameAtTheCommDocumentsMoment) {
  const std::vector<double> window = {150, 149, 151, 150, 152, 148};
  json calm = measured_record(window), busy = slower_by(measured_record(window), 1.1);
  calm["reference_probe"] = probe_block(20.0);
  busy["reference_probe"] = probe_block(22.0);
  const ClusterInput in = comm_with_alone(21.0);
  const json a = predicted_with(calm, in), b = predicted_with(busy, in);
  const json& level = b["prediction"]["reference_level"];
  ASSERT_TRUE(level["applied"].get<bool>()) << level.dump();
  EXPECT_DOUBLE_EQ(level["scale"].get<double>(), 21.0 / 22.0);
  EXPECT_DOUBLE_EQ(a["prediction"]["reference_level"]["scale"].get<double>(), 21.0 / 20.0);
  EXPECT_NEAR(a["average_iter_time"].get<double>(), b["average_iter_time"].get<double>(),
              1e-9 * a["average_iter_time"].get<double>());
  // Without the probe the two differ by the machine's moment.
  json calm_bare = calm, busy_bare = busy;
  calm_bare.erase("reference_probe");
  busy_bare.erase("reference_probe");
  const json a0 = predicted_with(calm_bare, in), b0 = predicted_with(busy_bare, in);
  EXPECT_GT(b0["average_iter_time"].get<double>(), 1.02 * a0["average_iter_time"].get<double>());
  // The compute is the run's times the scale.
  EXPECT_NEAR(a["prediction"]["time_ms"]["forward_backward"].get<double>(),
              21.0 / 20.0 * a0["prediction"]["time_ms"]["forward_backward"].get<double>(),
              1e-9 * a0["prediction"]["time_ms"]["forward_backward"].get<double>());
  // The record says what was measured.
  EXPECT_NE(a["prediction"]["cpu_contention"]["measured_inputs"].get<std::string>().find("reference probe"),
            std::string::npos);
  EXPECT_NEAR(level["comm_alone_ms"].get<double>(), 21.0, 1e-9);
}

// print's notes say when the prediction is of another moment than the run's (the machine 10%
// slower or faster when the comm document was measured), and nothing when the two agree.
TEST(ReferenceLevel, TheNotesSayWhenThePredictionIsOfAnotherMoment) {
  json run = measured_record({150, 149, 151, 150, 152, 148});
  run["reference_probe"] = probe_block(20.0);
  const std::string slower = prediction_notes({predicted_with(run, comm_with_alone(22.0))});
  EXPECT_NE(slower.find("22.00 ms in the comm document and 20.00 ms beside the run: the machine was 10% slower when "
                        "the document was measured, and the prediction is of that moment"),
            std::string::npos)
      << slower;
  const std::string faster = prediction_notes({predicted_with(run, comm_with_alone(18.0))});
  EXPECT_NE(faster.find("10% faster when the document was measured"), std::string::npos) << faster;
  const std::string own = prediction_notes({predicted_with(run, comm_with_alone(22.0, 2, ComputeLevel::run))});
  EXPECT_NE(own.find("10% slower when the document was measured; the prediction is of the run's moment"),
            std::string::npos)
      << own;
  EXPECT_EQ(prediction_notes({predicted_with(run, comm_with_alone(20.4))}).find("reference GEMM"), std::string::npos);
  json bare = run;
  bare.erase("reference_probe");
  EXPECT_EQ(prediction_notes({predicted_with(bare, comm_with_alone(30.0))}).find("reference GEMM"), std::string::npos)
      << "not applied: the run's own moment";
}

// Where either side lacks the probe, or the two timed different products, the run's own level
// stays and the record says why.
TEST(ReferenceLevel, FallsBackToTheRunsOwnLevelAndSaysWhy) {
  const json bare = measured_record({148, 150, 151, 153});
  const auto why_of = [&](const json& record, const ClusterInput& in) {
    const json p = predicted_with(record, in);
    EXPECT_FALSE(p["prediction"]["reference_level"]["applied"].get<bool>());
    EXPECT_DOUBLE_EQ(p["prediction"]["reference_level"]["scale"].get<double>(), 1.0);
    EXPECT_EQ(p["average_iter_time"], predicted_with(bare, in)["average_iter_time"]) << "not applied: the run's own level";
    return p["prediction"]["reference_level"]["why"].get<std::string>();
  };
  EXPECT_NE(why_of(bare, comm_with_alone(21.0)).find("no reference probe"), std::string::npos);
  json cuda = bare;
  cuda["reference_probe"] = {{"ran", false}, {"why", "a CUDA run"}};
  EXPECT_NE(why_of(cuda, comm_with_alone(21.0)).find("a CUDA run"), std::string::npos);
  json probed = bare;
  probed["reference_probe"] = probe_block(20.0);
  EXPECT_NE(why_of(probed, measured_comm(false)).find("alone_ms"), std::string::npos) << "an older comm document";
  EXPECT_NE(why_of(probed, comm_with_alone(21.0, 1)).find("do not compare"), std::string::npos) << "other threads";
  json other_size = bare;
  other_size["reference_probe"] = probe_block(20.0, 0, 2, 512);
  EXPECT_NE(why_of(other_size, comm_with_alone(21.0)).find("do not compare"), std::string::npos);
  EXPECT_NE(why_of(probed, cpu_cluster()).find("no comm document"), std::string::npos);
}

// By default the compute stays at the run's own level: the prediction is the one without a
// probe, and the record keeps the ratio of the two GEMMs and names the option that applies it.
TEST(ReferenceLevel, TheRunsOwnLevelIsTheDefault) {
  json run = measured_record({150, 149, 151, 150, 152, 148});
  json bare = run;
  run["reference_probe"] = probe_block(20.0);
  const ClusterInput own = comm_with_alone(22.0, 2, ComputeLevel::run);
  EXPECT_EQ(ClusterInput{}.compute_level, ComputeLevel::run);
  const json p = predicted_with(run, own);
  const json& level = p["prediction"]["reference_level"];
  EXPECT_FALSE(level["applied"].get<bool>());
  EXPECT_EQ(level["compute_level"], "run");
  EXPECT_NEAR(level["comm_over_run"].get<double>(), 1.1, 1e-12);
  EXPECT_NE(level["why"].get<std::string>().find("--compute-level comm-document"), std::string::npos) << level.dump();
  EXPECT_EQ(p["average_iter_time"], predicted_with(bare, own)["average_iter_time"]);
  EXPECT_GT(predicted_with(run, comm_with_alone(22.0))["average_iter_time"].get<double>(),
            1.02 * p["average_iter_time"].get<double>())
      << "carried to a moment 10% slower";
  EXPECT_EQ(compute_level_from_string("comm-document"), ComputeLevel::comm_document);
  EXPECT_EQ(compute_level_from_string("run"), ComputeLevel::run);
  try {
    compute_level_from_string("document");
    ADD_FAILURE() << "accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("valid: run, comm-document"), std::string::npos) << e.what();
  }
}

// The probe's own spread joins the interval: a noisier probe, a wider interval, around the same
// prediction.
TEST(ReferenceLevel, TheProbesSpreadWidensTheInterval) {
  json steady = measured_record({148, 150, 151, 153}), noisy = steady;
  steady["reference_probe"] = probe_block(20.0, 0.0);
  noisy["reference_probe"] = probe_block(20.0, 2.0);
  const json s = predicted_with(steady, comm_with_alone(20.0)), n = predicted_with(noisy, comm_with_alone(20.0));
  EXPECT_EQ(s["average_iter_time"], n["average_iter_time"]);
  const auto width = [](const json& p) {
    return p["prediction"]["interval_ms"]["high"].get<double>() - p["prediction"]["interval_ms"]["low"].get<double>();
  };
  EXPECT_GT(width(n), width(s));
  bool named = false;
  for (const auto& part : n["prediction"]["interval_ms"]["parts"])
    if (part["from"].get<std::string>().find("reference probe") != std::string::npos) {
      named = true;
      const double compute = n["prediction"]["time_ms"]["compute"].get<double>();
      EXPECT_NEAR(part["above_ms"].get<double>(), compute * (20.0 / 18.0 - 1), 1e-9);
      EXPECT_NEAR(part["below_ms"].get<double>(), compute * (1 - 20.0 / 22.0), 1e-9);
    }
  EXPECT_TRUE(named) << n["prediction"]["interval_ms"].dump();
}

// The comm document's reference GEMM: alone_ms, and its size from gemm_size or, in documents
// written before gemm_size, from the "gemm" text.
TEST(ReferenceLevel, TheCommDocumentsGemmIsRead) {
  const auto sharing = [](const std::string& fields) {
    const std::string doc = R"({"schema": "tokbench-comm", "schema_version": 1, "backend": "gloo", "device": "cpu",
        "world_size": 2, "nnodes": 1, "nproc_per_node": 2, "threads_per_rank": 1,
        "compute_sharing": {"ranks_per_node": 2, "threads_per_rank": 1, "slowdown": 1.1)" + fields + R"(},
        "results": [{"collective": "all_reduce", "size_bytes": 1000, "time_us": 30}]})";
    return *parse_comm_document(doc, "comm.json").compute_sharing;
  };
  const auto with_size = sharing(R"(, "alone_ms": 21.5, "gemm_size": 1024)");
  EXPECT_DOUBLE_EQ(*with_size.alone_seconds, 0.0215);
  EXPECT_EQ(*with_size.gemm_size, 1024);
  const auto from_text = sharing(R"(, "alone_ms": 21.5, "gemm": "fp32 1024x1024x1024, 15 alternating pairs")");
  EXPECT_EQ(*from_text.gemm_size, 1024);
  EXPECT_FALSE(sharing(R"(, "gemm": "fp32 1024x1024x512")").gemm_size) << "not square: no size";
  EXPECT_FALSE(sharing("").alone_seconds);
}

}  // namespace
}  // namespace tokbench::predict
