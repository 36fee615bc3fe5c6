// compare's statistics and pairing: the Student-t quantile against tabled values, the
// effective sample size on seeded synthetic series, the configuration key, duplicate keys
// refused by name, and the gate's calibration on recorded iteration times of a real
// `tokbench run` (tests/fixtures/compare/, recorded by scripts/record_compare_fixtures.sh).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "config/run_options.hpp"
#include "results/read_result.hpp"
#include "results/result_columns.hpp"
#include "sweep/compare.hpp"

namespace tokbench::sweep {
namespace {

// Seeded draws that read the same on every standard library: mt19937_64's sequence is fixed by
// the standard, the distributions' algorithms are not, so the uniform and normal are made here.
class Draws {
 public:
  explicit Draws(uint64_t seed) : engine_(seed) {}
  double uniform() { return static_cast<double>(engine_() >> 11) * 0x1.0p-53; }  // [0, 1)
  std::size_t below(std::size_t n) { return static_cast<std::size_t>(uniform() * static_cast<double>(n)); }
  double normal() {  // Box–Muller
    const double u = 1 - uniform();
    return std::sqrt(-2 * std::log(u)) * std::cos(2 * M_PI * uniform());
  }

 private:
  std::mt19937_64 engine_;
};

std::vector<double> ar1(double phi, std::size_t n, uint64_t seed) {
  Draws draws(seed);
  std::vector<double> x(n);
  double v = draws.normal() / std::sqrt(1 - phi * phi);  // start in the stationary distribution
  for (auto& value : x) {
    value = v;
    v = phi * v + draws.normal();
  }
  return x;
}

TEST(CompareStats, StudentQuantileMatchesTables) {
  // Two-sided 95% (0.975), and a few others, from the standard t table.
  EXPECT_NEAR(student_t_quantile(0.975, 1), 12.7062, 1e-4);
  EXPECT_NEAR(student_t_quantile(0.975, 2), 4.3027, 1e-4);
  EXPECT_NEAR(student_t_quantile(0.975, 5), 2.5706, 1e-4);
  EXPECT_NEAR(student_t_quantile(0.975, 10), 2.2281, 1e-4);
  EXPECT_NEAR(student_t_quantile(0.975, 30), 2.0423, 1e-4);
  EXPECT_NEAR(student_t_quantile(0.975, 120), 1.9799, 1e-4);
  EXPECT_NEAR(student_t_quantile(0.95, 10), 1.8125, 1e-4);
  EXPECT_NEAR(student_t_quantile(0.995, 20), 2.8453, 1e-4);
  EXPECT_NEAR(student_t_quantile(0.9, 3), 1.6377, 1e-4);
  // Large df: the normal's 1.959964.
  EXPECT_NEAR(student_t_quantile(0.975, 1e6), 1.95996, 1e-5);
  EXPECT_NEAR(student_t_quantile(0.975, 1e9), 1.95996, 1e-5);
  EXPECT_NEAR(student_t_quantile(0.975, INFINITY), 1.95996, 1e-5);
  // Symmetry, the median, and a df that is not whole (Welch's seldom are) between its neighbours.
  EXPECT_NEAR(student_t_quantile(0.025, 5), -2.5706, 1e-4);
  EXPECT_EQ(student_t_quantile(0.5, 7), 0.0);
  const double between = student_t_quantile(0.975, 7.5);
  EXPECT_LT(between, student_t_quantile(0.975, 7));
  EXPECT_GT(between, student_t_quantile(0.975, 8));
  // Far tails keep their digits: t with 1 df is Cauchy, quantile tan(π(p − 1/2)).
  EXPECT_NEAR(student_t_quantile(0.9999, 1), std::tan(M_PI * (0.9999 - 0.5)), 1e-6 * 3183.1);
}

TEST(CompareStats, StudentCdfMatchesClosedForms) {
  for (double t : {-30.0, -2.0, -0.3, 0.0, 0.7, 4.0, 100.0}) {
    // 1 df: Cauchy; 2 df: 1/2 + t / (2·sqrt(2 + t²)).
    EXPECT_NEAR(student_t_cdf(t, 1), 0.5 + std::atan(t) / M_PI, 1e-12) << t;
    EXPECT_NEAR(student_t_cdf(t, 2), 0.5 + t / (2 * std::sqrt(2 + t * t)), 1e-12) << t;
  }
  // The quantile inverts the CDF.
  for (double df : {1.0, 2.5, 9.0, 44.0}) EXPECT_NEAR(student_t_cdf(student_t_quantile(0.975, df), df), 0.975, 1e-10);
}

TEST(CompareStats, StudentRefusesWhatIsNotADistribution) {
  EXPECT_THROW(student_t_quantile(0, 5), std::invalid_argument);
  EXPECT_THROW(student_t_quantile(1, 5), std::invalid_argument);
  EXPECT_THROW(student_t_quantile(NAN, 5), std::invalid_argument);
  EXPECT_THROW(student_t_quantile(0.975, 0), std::invalid_argument);
  EXPECT_THROW(student_t_quantile(0.975, -3), std::invalid_argument);
  EXPECT_THROW(student_t_cdf(1, NAN), std::invalid_argument);
  EXPECT_THROW(student_t_cdf(NAN, 3), std::invalid_argument);
  try {
    student_t_quantile(1.5, 4);
    FAIL() << "p = 1.5 accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("valid: a number in (0, 1)"), std::string::npos) << e.what();
  }
}

TEST(CompareStats, EffectiveSampleSizeFallsForCorrelatedSeries) {
  // AR(1) with φ = 0.8: 1 + 2·Σ φ^k = (1 + φ)/(1 − φ) = 9, so n_eff ≈ n / 9.
  const std::size_t n = 2000;
  const double correlated = effective_sample_size(ar1(0.8, n, 7));
  EXPECT_LT(correlated, n / 5.0);
  EXPECT_GT(correlated, n / 15.0);
  // White noise: about n (within sampling noise; never above n).
  const double white = effective_sample_size(ar1(0.0, n, 8));
  EXPECT_GT(white, 0.8 * n);
  EXPECT_LE(white, static_cast<double>(n));
  // A constant series and an alternating one (negatively correlated): n, not more.
  EXPECT_EQ(effective_sample_size(std::vector<double>(50, 3.0)), 50.0);
  std::vector<double> alternating;
  for (int i = 0; i < 50; ++i) alternating.push_back(i % 2 ? 101.0 : 99.0);
  EXPECT_EQ(effective_sample_size(alternating), 50.0);
  // A steady trend is one long excursion: n_eff at its floor of 2.
  std::vector<double> trend;
  for (int i = 0; i < 60; ++i) trend.push_back(100.0 + i);
  EXPECT_LT(effective_sample_size(trend), 6.0);
  EXPECT_GE(effective_sample_size(trend), 2.0);
  EXPECT_THROW(effective_sample_size({1.0}), std::invalid_argument);
}

// Equal means, AR(1) noise: the 95% interval should hold 1 in about 95% of pairs. Iterations
// taken as independent (the interval this one replaced) hold it in far fewer.
TEST(CompareStats, IntervalCoversTheTruthForCorrelatedTimes) {
  int covered = 0;
  const int pairs = 200;
  for (int p = 0; p < pairs; ++p) {
    auto series = [&](uint64_t seed) {
      auto x = ar1(0.8, 60, seed);
      for (auto& v : x) v = 100 + 3 * v;  // ms: 5% cv around 100
      return iteration_stats(x);
    };
    const auto r = ratio_interval(series(1000 + 2 * p), series(1001 + 2 * p));
    covered += r.low <= 1 && 1 <= r.high;
  }
  std::printf("[ coverage ] AR(1) phi=0.8, n=60: the 95%% interval held 1 in %d of %d pairs\n", covered, pairs);
  EXPECT_GE(covered, 170);  // 85%: n_eff estimated from 60 values runs a little high
}

// A minimal run whose measured iterations take the given times.
nlohmann::json run_with(const std::vector<double>& times, const std::string& dtype = "fp32", int layers = 2) {
  nlohmann::json run = {{"schema_version", 3}, {"model_name", "m"},    {"Num GPUS", 1},          {"Seq Len", 32},
                        {"Micro BS", 1},       {"Global BS", 1},       {"GA", 1},                {"Distributed Mode", "none"},
                        {"Sharding Size", nullptr}, {"compiler", "eager"}, {"status", "ok"},   {"n_layer", layers},
                        {"dtype", dtype},      {"device", "cpu"},      {"tokens_per_sec", 1000.0}};
  run["config"] = {{"num_threads", 0}, {"data", "random"}};
  run["iterations"] = nlohmann::json::array();
  for (std::size_t i = 0; i < times.size(); ++i)
    run["iterations"].push_back({{"index", i}, {"warmup", false}, {"time_ms", times[i]}});
  return run;
}

TEST(CompareKey, DistinguishesEveryShapingOption) {
  const std::vector<double> times = {10, 11, 10, 12};
  const auto base = run_with(times);
  EXPECT_NE(configuration_key(base), configuration_key(run_with(times, "bf16-true")));
  EXPECT_NE(configuration_key(base), configuration_key(run_with(times, "fp32", 4)));
  for (const char* field : {"num_threads", "data", "data_dtype", "cpu_allocator", "ddp_overlap", "model_config"}) {
    auto other = base;
    other["config"][field] = "something else";
    EXPECT_NE(configuration_key(base), configuration_key(other)) << field;
  }
  for (const char* field : {"compiler", "device", "zero_grad", "sharding_mode", "bucketing", "Seq Len"}) {
    auto other = base;
    other[field] = "something else";
    EXPECT_NE(configuration_key(base), configuration_key(other)) << field;
  }
  auto with_tf32 = base;  // a switch: true or false, as the record types it
  with_tf32["tf32"] = true;
  EXPECT_NE(configuration_key(base), configuration_key(with_tf32));
  // A key of the record holding another type is no record's: refused, naming the key.
  auto wrong = base;
  wrong["tf32"] = "something else";
  EXPECT_THROW(configuration_key(wrong), std::invalid_argument);
  // Activation checkpointing; a result from before the switch existed ran without it.
  auto checkpointed = base;
  checkpointed["checkpoint_activations"] = true;
  EXPECT_NE(configuration_key(base), configuration_key(checkpointed));
  auto not_checkpointed = base;
  not_checkpointed["checkpoint_activations"] = false;
  EXPECT_EQ(configuration_key(base), configuration_key(not_checkpointed));
  // AdamW's decay on or off shapes the step; its size does not.
  auto decay = base, more_decay = base, no_decay = base;
  decay["config"]["weight_decay"] = 0.1;
  more_decay["config"]["weight_decay"] = 0.2;
  no_decay["config"]["weight_decay"] = 0.0;
  EXPECT_EQ(configuration_key(decay), configuration_key(more_decay));
  EXPECT_NE(configuration_key(decay), configuration_key(no_decay));
  // Which CUDA device a run got, its seed and its iteration counts do not shape it.
  auto a = base, b = base;
  a["device"] = "cuda:0";
  b["device"] = "cuda:1";
  b["config"]["seed"] = 7;
  b["max_iters"] = 99;
  EXPECT_EQ(configuration_key(a), configuration_key(b));
  // An older result without the newer keys reads "none" for them.
  nlohmann::json old = {{"model_name", "m"}, {"Num GPUS", 1}};
  const auto key = configuration_key(old);
  EXPECT_NE(key.find("dtype=none"), std::string::npos) << key;
  EXPECT_NE(key.find("layers=none"), std::string::npos) << key;
  EXPECT_NE(key.find("threads=none"), std::string::npos) << key;
}

// The key's fields come from the option tables (config/), which sit below the record's layer and
// spell the top-level keys they are read from: each must be a key the record's column table
// knows, so a renamed record key fails here rather than reading "none" in every comparison.
TEST(CompareKey, TopLevelFieldsAreRecordColumns) {
  std::size_t top_level = 0;
  for (const auto& field : config::iteration_keys()) {
    if (field.in_config) continue;
    ++top_level;
    EXPECT_NE(results::find_column(field.record_key), nullptr) << field.heading() << " reads " << field.record_key;
  }
  EXPECT_GE(top_level, 10u);
}

TEST(CompareKey, RunsDifferingOnlyByDtypeOrLayersArePairedSeparately) {
  const std::vector<double> fast = {10, 10.1, 9.9, 10, 10.2, 9.8};
  std::vector<double> slow = fast;
  for (auto& t : slow) t *= 2;
  // BASE fp32 fast, bf16 fast; NEW: bf16 twice as slow. Today's key (no dtype) paired them wrong.
  const auto c = compare_runs({run_with(fast, "fp32"), run_with(fast, "bf16-true")},
                              {run_with(fast, "fp32"), run_with(slow, "bf16-true")}, 0.10);
  ASSERT_EQ(c.size(), 2u);
  EXPECT_NE(c[0].configuration.find("dtype=fp32"), std::string::npos);
  EXPECT_EQ(c[0].verdict, Verdict::unchanged);
  EXPECT_NE(c[1].configuration.find("dtype=bf16-true"), std::string::npos);
  EXPECT_EQ(c[1].verdict, Verdict::slower);
  // Layers: a NEW with 4 layers is not the BASE's 2-layer run.
  const auto layers = compare_runs({run_with(fast, "fp32", 2), run_with(fast, "bf16-true")},
                                   {run_with(slow, "fp32", 4), run_with(fast, "bf16-true")}, 0.10);
  ASSERT_EQ(layers.size(), 3u);
  EXPECT_EQ(layers[0].verdict, Verdict::missing);
  EXPECT_EQ(layers[2].verdict, Verdict::missing);
  EXPECT_EQ(layers[2].note, "not in BASE");
}

TEST(CompareKey, TwoResultsOfOneConfigurationOnASideAreNamed) {
  const std::vector<double> times = {10, 11, 10, 12};
  const std::vector<nlohmann::json> two = {run_with(times), run_with(times, "bf16-true"), run_with(times)};
  try {
    compare_runs(two, {run_with(times)}, 0.1, {"base/runs/a.json", "base/runs/b.json", "base/runs/c.json"}, {"n.json"});
    FAIL() << "a duplicate configuration on BASE was accepted";
  } catch (const std::invalid_argument& e) {
    const std::string what = e.what();
    EXPECT_EQ(what.find("BASE"), 0u) << what;
    EXPECT_NE(what.find("base/runs/a.json"), std::string::npos) << what;
    EXPECT_NE(what.find("base/runs/c.json"), std::string::npos) << what;
    EXPECT_EQ(what.find("base/runs/b.json"), std::string::npos) << what;
    EXPECT_NE(what.find(configuration_key(two[0])), std::string::npos) << what;
    EXPECT_EQ(what.find('\n'), std::string::npos) << what;
  }
  // On NEW, without source names: the runs' positions.
  try {
    compare_runs({run_with(times), run_with(times, "bf16-true")}, two, 0.1);
    FAIL() << "a duplicate configuration on NEW was accepted";
  } catch (const std::invalid_argument& e) {
    const std::string what = e.what();
    EXPECT_EQ(what.find("NEW"), 0u) << what;
    EXPECT_NE(what.find("run 1 and run 3"), std::string::npos) << what;
  }
  EXPECT_THROW(compare_runs({run_with(times)}, {run_with(times)}, 1.5), std::invalid_argument);
}

// ---- Calibration on recorded iteration times ----

struct Recording {
  std::string name;
  nlohmann::json run;          // the real result, its iterations replaced by each draw
  std::vector<double> times;   // its measured iteration times, ms
};

std::vector<Recording> recordings() {
  namespace fs = std::filesystem;
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(TOKBENCH_COMPARE_FIXTURES))
    if (entry.path().extension() == ".json") files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  std::vector<Recording> out;
  for (const auto& f : files) {
    Recording r{f.filename().string(), results::read_run_result(f), {}};
    for (const auto& it : r.run["iterations"])
      if (!it["warmup"].get<bool>()) r.times.push_back(it["time_ms"].get<double>());
    out.push_back(std::move(r));
  }
  return out;
}

// A moving-block bootstrap of `times`: blocks of consecutive iterations from random starts,
// laid end to end to the series' length. A block spans twice the recording's integrated
// autocorrelation time (n / n_eff; at least 5 iterations, at most a quarter of the series), so a
// resample keeps the correlated stretches the recording has, not only its lag-1 correlation:
// shorter blocks would hand the gate sides less correlated, and easier, than real runs.
std::size_t block_length(const std::vector<double>& times) {
  const double n = static_cast<double>(times.size());
  const double span = 2 * n / effective_sample_size(times);
  return static_cast<std::size_t>(std::clamp(std::ceil(span), 5.0, std::floor(n / 4)));
}

std::vector<double> block_resample(const std::vector<double>& times, Draws& draws, double scale) {
  const std::size_t block = block_length(times);
  std::vector<double> out;
  while (out.size() < times.size()) {
    const std::size_t start = draws.below(times.size() - block + 1);
    for (std::size_t i = start; i < start + block && out.size() < times.size(); ++i) out.push_back(times[i] * scale);
  }
  return out;
}

nlohmann::json with_times(nlohmann::json run, const std::vector<double>& times) {
  run["iterations"] = nlohmann::json::array();
  for (std::size_t i = 0; i < times.size(); ++i)
    run["iterations"].push_back({{"index", i}, {"warmup", false}, {"time_ms", times[i]}});
  return run;
}

// `pairs` seeded pairs of simulated sweeps; each pair draws one recording and resamples both
// sides from it (the interval claims each run's own noise, autocorrelated as recorded; drift
// between runs is outside it, compare.hpp). Returns how many pairs the gate called SLOWER.
int slower_pairs(const std::vector<Recording>& recorded, double slowdown, uint64_t seed, double threshold = 0.10,
                 int pairs = 20) {
  int slower = 0;
  for (int pair = 0; pair < pairs; ++pair) {
    Draws draws(seed + static_cast<uint64_t>(pair));
    const auto& r = recorded[draws.below(recorded.size())];
    const auto base = with_times(r.run, block_resample(r.times, draws, 1.0));
    const auto next = with_times(r.run, block_resample(r.times, draws, slowdown));
    const auto c = compare_runs({base}, {next}, threshold);
    EXPECT_EQ(c.size(), 1u);
    slower += c[0].verdict == Verdict::slower;
  }
  return slower;
}

TEST(CompareCalibration, RecordedTimesPassUnchangedAndFailAFifteenPercentSlowdown) {
  const auto recorded = recordings();
  ASSERT_GE(recorded.size(), 2u) << "scripts/record_compare_fixtures.sh records them";
  for (const auto& r : recorded) {
    ASSERT_EQ(r.run["status"], "ok") << r.name;
    ASSERT_GE(r.times.size(), 50u) << r.name;
    const auto s = iteration_stats(r.times);
    std::printf("[ recorded ] %s: %zu measured iterations, mean %.2f ms, cv %.3f, n_eff %.1f, resampled in blocks of %zu\n",
                r.name.c_str(), r.times.size(), s.mean, s.stddev / s.mean, s.n_eff, block_length(r.times));
  }
  const int unchanged_slower = slower_pairs(recorded, 1.0, 20261201);
  const int slowdown_slower = slower_pairs(recorded, 1.15, 20261301);
  std::printf("[ calibration ] identical sides: %d of 20 pairs not SLOWER; NEW x1.15: %d of 20 pairs SLOWER\n",
              20 - unchanged_slower, slowdown_slower);
  EXPECT_GE(20 - unchanged_slower, 15);
  EXPECT_GE(slowdown_slower, 15);
}

// The sharper check: at threshold 0, identical sides are called SLOWER when the interval's
// lower end passes 1, which a 95% interval allows in 2.5% of pairs. Iterations counted as
// independent (the interval this one replaced) did so in 15-25% of pairs on these recordings;
// n_eff and t in about 3.6% (4,000 pairs): Geyer's sum from a few hundred values runs a little
// short. The bound, 6% of 400 pairs, leaves room for the sampling noise of 400 pairs around that.
TEST(CompareCalibration, IdenticalSidesAtThresholdZeroAreRarelySlower) {
  const auto recorded = recordings();
  ASSERT_GE(recorded.size(), 2u);
  const int pairs = 400;
  const int slower = slower_pairs(recorded, 1.0, 20261401, 0.0, pairs);
  std::printf("[ calibration ] identical sides, threshold 0: %d of %d pairs SLOWER (a 95%% interval: 2.5%%, %d)\n",
              slower, pairs, pairs / 40);
  EXPECT_LE(slower, pairs * 6 / 100);
}

}  // namespace
}  // namespace tokbench::sweep
