// Lightning's Trainer ThroughputMonitor scenarios (docs/throughput.md, "Lightning's monitors")
// on a fake loop: the callback's bookkeeping (per-stage Throughput, t0, counters,
// validation-time shift, logging schedule) written out in the test, driving our Throughput
// with Lightning's scripted clocks.
#include <gtest/gtest.h>

#include <deque>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "test_support.hpp"
#include "tokbench/throughput.hpp"

namespace tokbench {
namespace {

using testing::Expected;
using testing::SameMetrics;

struct Log {
  Metrics metrics;
  int64_t step;
};

// The state Lightning's callback keeps per stage ("train", "validate", "test", "predict").
class FakeCallback {
 public:
  FakeCallback(std::vector<double> clock, ThroughputOptions options)
      : clock_(clock.begin(), clock.end()), options_(std::move(options)) {}

  void setup(const std::string& stage) { tps_.insert_or_assign(stage, Throughput(options_)); }
  void start(const std::string& stage, bool fitting) {
    if (fitting || !samples_.count(stage)) {
      tps_.at(stage).reset();
      lengths_[stage] = samples_[stage] = batches_[stage] = 0;
    }
    t0_[stage] = now();
  }
  void update(const std::string& stage, int64_t batch_size, std::optional<int64_t> length,
              std::optional<double> flops) {
    const double elapsed = now() - t0_.at(stage);
    if (length) lengths_[stage] += *length;
    samples_[stage] += batch_size;
    batches_[stage] += 1;
    const std::optional<int64_t> lengths =
        lengths_[stage] ? std::optional<int64_t>(lengths_[stage]) : std::nullopt;
    tps_.at(stage).update(elapsed, batches_[stage], samples_[stage], lengths, flops);
  }
  void log(const std::string& stage, int64_t step, std::optional<int64_t> epoch) {
    Metrics m;
    for (const auto& [k, v] : tps_.at(stage).compute()) m.emplace_back(stage + sep() + k, v);
    if (epoch) m.emplace_back("epoch", static_cast<double>(*epoch));
    logs.push_back({std::move(m), step});
  }
  // on_validation_end during fit: move the train clock past the validation run.
  void validation_end() {
    const double train_elapsed = last_time("train");
    const double val_elapsed = last_time("validate");
    const double training_finished = t0_.at("train") + train_elapsed;
    const double time_between = t0_.at("validate") - training_finished;
    t0_["train"] += time_between + val_elapsed;
  }
  std::vector<Log> logs;
  bool has_stage(const std::string& s) const { return tps_.count(s) != 0; }

 private:
  std::string sep() const { return options_.separator; }
  double last_time(const std::string& stage) const {
    const Throughput& t = tps_.at(stage);
    return t.time_window_size() ? t.compute()[0].second : 0.0;
  }
  double now() {
    const double t = clock_.front();
    clock_.pop_front();
    return t;
  }
  std::deque<double> clock_;
  ThroughputOptions options_;
  std::map<std::string, Throughput> tps_;
  std::map<std::string, double> t0_;
  std::map<std::string, int64_t> lengths_, samples_, batches_;
};

ThroughputOptions opts(int64_t window, std::string sep = "/", std::optional<double> peak = 100) {
  ThroughputOptions o;
  o.window_size = window;
  o.separator = std::move(sep);
  o.available_flops = peak;
  o.using_sparse_model = false;
  return o;
}

TEST(TrainerCallback, Fit) {
  FakeCallback cb({0.0, 1.5, 2.5, 3.5, 4.5, 5.5}, opts(4, "|"));
  cb.setup("train");
  cb.start("train", true);
  for (int64_t step = 0; step < 5; ++step) {
    cb.update("train", 3, 6, 10);
    cb.log("train", step, 0);
  }
  ASSERT_EQ(cb.logs.size(), 5u);
  EXPECT_TRUE(SameMetrics(cb.logs[0].metrics, {{"train|time", 1.5},
                                               {"train|batches", 1},
                                               {"train|samples", 3},
                                               {"train|lengths", 6},
                                               {"epoch", 0}}));
  EXPECT_TRUE(SameMetrics(cb.logs[4].metrics, {{"train|time", 5.5},
                                               {"train|batches", 5},
                                               {"train|samples", 15},
                                               {"train|lengths", 30},
                                               {"train|device|batches_per_sec", 1.0},
                                               {"train|device|samples_per_sec", 3.0},
                                               {"train|device|items_per_sec", 6.0},
                                               {"train|device|flops_per_sec", 10.0},
                                               {"train|device|mfu", 0.1},
                                               {"epoch", 0}}));
  EXPECT_FALSE(cb.has_stage("validate"));
}

TEST(TrainerCallback, FitWithValidation) {
  FakeCallback cb({0, 7, 11, 13, 19}, opts(2, "/", std::nullopt));
  cb.setup("validate");
  cb.setup("train");
  cb.start("train", true);
  cb.update("train", 1, std::nullopt, std::nullopt);
  cb.log("train", 0, 0);
  cb.start("validate", true);
  cb.update("validate", 1, std::nullopt, std::nullopt);
  cb.log("validate", 1, std::nullopt);
  cb.validation_end();
  cb.update("train", 1, std::nullopt, std::nullopt);
  cb.log("train", 1, 0);
  ASSERT_EQ(cb.logs.size(), 3u);
  EXPECT_TRUE(SameMetrics(cb.logs[0].metrics,
                          {{"train/time", 7}, {"train/batches", 1}, {"train/samples", 1}, {"epoch", 0}}));
  EXPECT_TRUE(SameMetrics(cb.logs[1].metrics,
                          {{"validate/time", 2}, {"validate/batches", 1}, {"validate/samples", 1}}));
  EXPECT_TRUE(SameMetrics(cb.logs[2].metrics, {{"train/time", 13},  // 7 + (19 - 13)
                                               {"train/batches", 2},
                                               {"train/samples", 2},
                                               {"train/device/batches_per_sec", 1.0 / 6},
                                               {"train/device/samples_per_sec", 1.0 / 6},
                                               {"epoch", 0}}));
}

class GradientAccumulation : public ::testing::TestWithParam<int> {};

TEST_P(GradientAccumulation, LogsAtOptimizerSteps) {
  const int log_every = GetParam();
  std::vector<double> clock = {0.0};
  for (int i = 1; i <= 10; ++i) clock.push_back(i + 0.5);
  FakeCallback cb(clock, opts(4, "|"));
  cb.setup("train");
  cb.start("train", true);  // once per fit: time and counters continue across epochs
  int64_t stepped = 0;
  for (int epoch = 0; epoch < 2; ++epoch) {
    for (int b = 1; b <= 5; ++b) {
      cb.update("train", 3, 6, 10);
      const bool optimizer_step = b % 2 == 0 || b == 5;  // the epoch's last batch always steps
      if (!optimizer_step) continue;
      if ((stepped + 1) % log_every == 0) cb.log("train", stepped, epoch);
      ++stepped;
    }
  }
  struct Row { double time; int64_t batches; int64_t epoch; };
  const Row all[] = {{2.5, 2, 0}, {4.5, 4, 0}, {5.5, 5, 0}, {7.5, 7, 1}, {9.5, 9, 1}, {10.5, 10, 1}};
  std::vector<int> expected_steps;
  for (int s = 0; s < 6; ++s)
    if ((s + 1) % log_every == 0) expected_steps.push_back(s);
  ASSERT_EQ(cb.logs.size(), expected_steps.size());
  for (std::size_t i = 0; i < expected_steps.size(); ++i) {
    const int s = expected_steps[i];
    const Row& r = all[s];
    Expected want = {{"train|time", r.time},
                     {"train|batches", static_cast<double>(r.batches)},
                     {"train|samples", 3.0 * r.batches},
                     {"train|lengths", 6.0 * r.batches}};
    if (s > 0) {
      want.insert(want.end(), {{"train|device|batches_per_sec", 1.0},
                               {"train|device|samples_per_sec", 3.0},
                               {"train|device|items_per_sec", 6.0},
                               {"train|device|flops_per_sec", 10.0},
                               {"train|device|mfu", 0.1}});
    }
    want.emplace_back("epoch", static_cast<double>(r.epoch));
    EXPECT_TRUE(SameMetrics(cb.logs[i].metrics, want)) << "step " << s;
    EXPECT_EQ(cb.logs[i].step, s);
  }
}
INSTANTIATE_TEST_SUITE_P(LogEveryNSteps, GradientAccumulation, ::testing::Values(1, 3));

TEST(TrainerCallback, VariableBatchSize) {
  FakeCallback cb({0, .1, .2, .3, .4, .5}, opts(5, "|", std::nullopt));
  cb.setup("train");
  cb.start("train", true);
  const int64_t sizes[] = {1, 3, 2, 1, 4};
  const double want_samples[] = {1, 4, 6, 7, 11};
  for (int i = 0; i < 5; ++i) {
    cb.update("train", sizes[i], std::nullopt, std::nullopt);  // no "Expected the value to increase"
    cb.log("train", i, 0);
    EXPECT_EQ(cb.logs[i].metrics[1], (std::pair<std::string, double>{"train|batches", i + 1.0}));
    EXPECT_EQ(cb.logs[i].metrics[2], (std::pair<std::string, double>{"train|samples", want_samples[i]}));
  }
}

TEST(TrainerCallback, ValidationWithManyEpochsDoesNotOverflow) {
  // Regression test for Lightning #21291: per epoch the clock reads train batch 1 end, batch 2
  // end, val start, val batch end; blocks [t, t+3, t+6, t+7, t+8], t += 10, read in sequence.
  std::vector<double> clock;
  for (int e = 0; e < 100; ++e)
    for (double d : {0.0, 3.0, 6.0, 7.0, 8.0}) clock.push_back(10.0 * e + d);
  FakeCallback cb(clock, opts(100, "/", std::nullopt));
  cb.setup("validate");
  cb.setup("train");
  cb.start("train", true);
  std::vector<double> train_times;
  for (int e = 0; e < 99; ++e) {
    for (int b = 0; b < 2; ++b) {
      cb.update("train", 1, std::nullopt, std::nullopt);
      cb.log("train", 0, e);
      train_times.push_back(cb.logs.back().metrics[0].second);
    }
    cb.start("validate", true);
    cb.update("validate", 1, std::nullopt, std::nullopt);
    cb.validation_end();
  }
  const std::vector<double> first = {3, 6, 8, 11, 12, 14};
  for (std::size_t i = 0; i < first.size(); ++i) EXPECT_EQ(train_times[i], first[i]) << i;
  // Accumulated train-only time grows by at most the 10 s of clock per epoch; sum(_time) would
  // have grown quadratically.
  for (std::size_t i = 1; i < train_times.size(); ++i) EXPECT_GT(train_times[i], train_times[i - 1]);
  EXPECT_LT(train_times.back(), 10.0 * 100);
}

TEST(TrainerCallback, RepeatedEvalCallsKeepCountingButRestartTime) {
  for (const std::string stage : {"validate", "test", "predict"}) {
    std::vector<double> clock;
    for (int call = 0; call < 2; ++call)
      for (int i = 0; i <= 6; ++i) clock.push_back(i);
    FakeCallback cb(clock, opts(3, "|"));
    int64_t total = 0;
    for (int call = 0; call < 2; ++call) {
      cb.setup(stage);  // a new Throughput on every trainer.validate/test/predict call
      cb.start(stage, /*fitting=*/false);
      for (int64_t current = 1; current <= 6; ++current) {
        cb.update(stage, 3, std::nullopt, 10);
        ++total;
        if (current % 3 == 0) cb.log(stage, total, std::nullopt);
      }
    }
    ASSERT_EQ(cb.logs.size(), 4u) << stage;
    for (std::size_t i = 0; i < 4; ++i) {
      const auto& m = cb.logs[i].metrics;
      EXPECT_EQ(cb.logs[i].step, 3 * static_cast<int64_t>(i + 1));
      EXPECT_EQ(m[1].second, 3.0 * (i + 1)) << stage;  // batches 3, 6, 9, 12
      EXPECT_EQ(m[2].second, 9.0 * (i + 1)) << stage;  // samples 9, 18, 27, 36
      ASSERT_EQ(m.size(), 7u) << stage;                // time, batches, samples + 4 rates
      EXPECT_EQ(m[6].first, stage + "|device|mfu");
    }
  }
}

}  // namespace
}  // namespace tokbench
