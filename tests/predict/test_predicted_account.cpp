// A prediction's time account and interval (docs/predict.md, "The predicted time account" and
// "How sure"): from a fabricated one-rank record with an account and per-iteration times, the
// predicted account's categories sum to the predicted iteration, exposed communication and the
// optimizer are the schedule's, the contention is named in other; `explain` reads a prediction
// against a measured record; a noisier record widens the interval; a record without an account
// gives a prediction that says it has none.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "account/category.hpp"
#include "account/explanation.hpp"
#include "account/time_account_json.hpp"
#include "predict/cluster.hpp"
#include "predict/input_spread.hpp"
#include "predict/measured_run.hpp"
#include "predict/predicted_account.hpp"
#include "predict/prediction.hpp"
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

ClusterInput cpu_cluster() { return {parse_cluster_toml(kCpuCluster, "cpu.toml"), std::nullopt, {}}; }

TargetOptions on_ranks(int64_t ranks) {
  TargetOptions t;
  t.nproc_per_node = ranks;
  t.distributed_mode = ranks == 1 ? "none" : "ddp";
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
  // Two ranks of 2 threads on 2 cores: Gloo's core stops compute while a bucket flies, and that
  // time is in other, named first.
  const double contention_s = time_ms["cpu_contention"].get<double>() / 1e3;
  ASSERT_GT(contention_s, 0);
  EXPECT_EQ(a["other_top"][0]["name"], kContentionName);
  EXPECT_NEAR(a["other_top"][0]["profiled_s"].get<double>(), contention_s, 1e-12);
  EXPECT_NEAR(p["prediction"]["time_account"]["contention_ms"].get<double>(), contention_s * 1e3, 1e-9);
  // The forward and backward categories keep the measured proportions and hold the predicted
  // forward and backward; other beyond the contention too.
  const double forward_backward = time_ms["forward_backward"].get<double>() / 1e3;
  const double scale = p["prediction"]["time_account"]["forward_backward_scale"].get<double>();
  double scaled = 0;
  for (const Category c : {Category::gemm, Category::attention, Category::normalization, Category::elementwise,
                           Category::loss, Category::data_host, Category::device_idle}) {
    const std::string name(account::json_name(c));
    const double measured = kMeasured.count(name) ? kMeasured.at(name) : 0.0;
    EXPECT_NEAR(seconds_of(a, c), measured * scale, 1e-12) << name;
    scaled += seconds_of(a, c);
  }
  scaled += seconds_of(a, Category::other) - contention_s;
  EXPECT_NEAR(scaled, forward_backward, 1e-12);
  // The reader every command uses takes it: shares sum to 1, categories to the iteration.
  const account::TimeAccount read = account::time_account_from_json(nlohmann::ordered_json::parse(a.dump()));
  EXPECT_FALSE(read.rank.has_value()) << "every simulated rank runs the same schedule";
  EXPECT_TRUE(p["prediction"]["time_account"]["made"].get<bool>());
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

TEST(InputSpread, TheIntervalWidensWithANoisierRecord) {
  const auto width = [](const json& p) {
    return p["prediction"]["interval_ms"]["high"].get<double>() - p["prediction"]["interval_ms"]["low"].get<double>();
  };
  const json steady = predicted(measured_record({150, 150, 150, 150}), 2);
  const json quiet = predicted(measured_record({148, 150, 151, 153}), 2);
  const json noisy = predicted(measured_record({120, 150, 170, 210}), 2);
  EXPECT_DOUBLE_EQ(width(steady), 0) << "iterations that agree give the prediction itself";
  EXPECT_GT(width(quiet), 0);
  EXPECT_GT(width(noisy), 5 * width(quiet));
  for (const json* p : {&steady, &quiet, &noisy}) {
    const double iteration = (*p)["average_iter_time"].get<double>();
    EXPECT_LE((*p)["prediction"]["interval_ms"]["low"].get<double>(), iteration);
    EXPECT_GE((*p)["prediction"]["interval_ms"]["high"].get<double>(), iteration);
    EXPECT_EQ((*p)["average_iter_time"], steady["average_iter_time"]) << "the spread does not move the prediction";
  }
  // The rule: the compute moves by the quartiles relative to the median.
  const double compute = noisy["prediction"]["time_ms"]["compute"].get<double>();
  const json& s = noisy["prediction"]["input_spread"];
  EXPECT_NEAR(noisy["prediction"]["interval_ms"]["high"].get<double>() - noisy["average_iter_time"].get<double>(),
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
