// Lightning's Fabric ThroughputMonitor tests (docs/throughput.md, "Tests and reference"): the
// mock train loop with world sizes 1 and 2, the step counter, the sparse-scaled peak, and
// rank-zero-only behaviour.
#include <gtest/gtest.h>

#include <vector>

#include "test_support.hpp"
#include "tokbench/throughput.hpp"

namespace tokbench {
namespace {

using testing::Expected;
using testing::SameMetrics;
using testing::untyped;

struct LoggedCall {
  Metrics metrics;
  int64_t step;
};

struct Recorder {
  std::vector<LoggedCall> calls;
  MetricsSink sink() {
    return [this](const TypedMetrics& m, int64_t step) { calls.push_back({untyped(m), step}); };
  }
};

// Lightning's mock_train_loop: five iterations, compute_and_log() after each update.
void mock_train_loop(ThroughputMonitor& monitor) {
  for (int64_t i = 1; i <= 5; ++i) {
    monitor.update(static_cast<double>(i) + 0.5, i, 3 * i, 6 * i, 10);
    monitor.compute_and_log();
  }
}

ThroughputOptions monitor_options() {
  ThroughputOptions o;
  o.available_flops = 100;  // get_available_flops patched to 100 in Lightning's test
  o.window_size = 4;
  o.separator = "|";
  return o;
}

TEST(ThroughputMonitor, LightningMonitorLoop) {
  Recorder rec;
  testing::CapturedWarnings warnings;  // the dense-model warning is expected here
  ThroughputMonitor monitor(monitor_options(), /*rank=*/0, rec.sink());
  mock_train_loop(monitor);
  ASSERT_EQ(rec.calls.size(), 5u);
  EXPECT_TRUE(SameMetrics(rec.calls[0].metrics,
                          {{"time", 1.5}, {"batches", 1}, {"samples", 3}, {"lengths", 6}}));
  EXPECT_TRUE(SameMetrics(rec.calls[1].metrics,
                          {{"time", 2.5}, {"batches", 2}, {"samples", 6}, {"lengths", 12}}));
  EXPECT_TRUE(SameMetrics(rec.calls[2].metrics,
                          {{"time", 3.5}, {"batches", 3}, {"samples", 9}, {"lengths", 18}}));
  auto full = [](double time, int64_t n) {
    return Expected{{"time", time},
                    {"batches", static_cast<double>(n)},
                    {"samples", 3.0 * n},
                    {"lengths", 6.0 * n},
                    {"device|batches_per_sec", 1.0},
                    {"device|samples_per_sec", 3.0},
                    {"device|items_per_sec", 6.0},
                    {"device|flops_per_sec", 10.0},
                    {"device|mfu", 0.1}};
  };
  EXPECT_TRUE(SameMetrics(rec.calls[3].metrics, full(4.5, 4)));
  EXPECT_TRUE(SameMetrics(rec.calls[4].metrics, full(5.5, 5)));
  for (int64_t i = 0; i < 5; ++i) EXPECT_EQ(rec.calls[i].step, i);
}

TEST(ThroughputMonitor, LightningMonitorWorldSize) {
  Recorder rec;
  testing::CapturedWarnings warnings;
  ThroughputMonitor monitor(monitor_options(), 0, rec.sink());
  monitor.throughput().set_world_size(2);  // Lightning's test assigns monitor.world_size = 2
  monitor.throughput().set_separator("/");  // its world-size test uses the default separator
  mock_train_loop(monitor);
  ASSERT_EQ(rec.calls.size(), 5u);
  EXPECT_TRUE(SameMetrics(rec.calls[2].metrics,
                          {{"time", 3.5}, {"batches", 3}, {"samples", 9}, {"lengths", 18}}));
  for (int k : {3, 4}) {
    const double time = k + 1.5;
    const double n = k + 1;
    EXPECT_TRUE(SameMetrics(rec.calls[k].metrics, {{"time", time},
                                                   {"batches", n},
                                                   {"samples", 3 * n},
                                                   {"lengths", 6 * n},
                                                   {"device/batches_per_sec", 1.0},
                                                   {"device/samples_per_sec", 3.0},
                                                   {"batches_per_sec", 2.0},
                                                   {"samples_per_sec", 6.0},
                                                   {"device/items_per_sec", 6.0},
                                                   {"items_per_sec", 12.0},
                                                   {"flops_per_sec", 20.0},
                                                   {"device/flops_per_sec", 10.0},
                                                   {"device/mfu", 0.1}}));
  }
}

TEST(ThroughputMonitor, LightningMonitorStep) {
  Recorder rec;
  ThroughputMonitor monitor(ThroughputOptions{}, 0, rec.sink());
  EXPECT_EQ(monitor.step(), -1);
  monitor.update(0.5, 1, 3);
  EXPECT_TRUE(SameMetrics(untyped(monitor.compute_and_log()),
                          {{"time", 0.5}, {"batches", 1}, {"samples", 3}}));
  EXPECT_EQ(monitor.step(), 0);
  monitor.update(1.5, 2, 4);
  EXPECT_TRUE(SameMetrics(untyped(monitor.compute_and_log(5)),
                          {{"time", 1.5}, {"batches", 2}, {"samples", 4}}));
  EXPECT_EQ(monitor.step(), 5);
  ASSERT_EQ(rec.calls.size(), 2u);
  EXPECT_EQ(rec.calls[0].step, 0);
  EXPECT_EQ(rec.calls[1].step, 5);
  monitor.update(2.5, 3, 5);
  monitor.compute_and_log();  // auto-increment continues from the override
  EXPECT_EQ(monitor.step(), 6);
}

TEST(ThroughputMonitor, LightningMonitorSparseModel) {
  ThroughputOptions o;
  o.available_flops = 100;
  o.using_sparse_model = true;
  o.sparse_cuda_acceleration_factor = 2.0;
  ThroughputMonitor monitor(o, 0);
  EXPECT_EQ(monitor.available_flops(), 200.0);
}

TEST(ThroughputMonitor, NonZeroRanksAreNoOps) {
  Recorder rec;
  testing::CapturedWarnings warnings;
  ThroughputOptions o = monitor_options();
  ThroughputMonitor monitor(o, /*rank=*/3, rec.sink());
  EXPECT_TRUE(warnings.messages.empty());  // rank_zero_warn: silent off rank 0
  mock_train_loop(monitor);
  monitor.update(0.1, 9, 1);  // would be invalid on rank 0; ignored here
  EXPECT_TRUE(monitor.compute().empty());
  EXPECT_TRUE(monitor.compute_and_log(7).empty());
  EXPECT_EQ(monitor.step(), -1);
  EXPECT_TRUE(rec.calls.empty());
  EXPECT_EQ(monitor.throughput().time_window_size(), 0u);
  // Options are still validated on every rank.
  o.window_size = 1;
  EXPECT_THROW(ThroughputMonitor(o, 3), AssertionError);
}

TEST(ThroughputMonitor, ResetClearsWindowsButKeepsStep) {
  ThroughputMonitor monitor(ThroughputOptions{}, 0);
  monitor.update(1.0, 1, 1);
  monitor.compute_and_log();
  monitor.reset();
  EXPECT_THROW(monitor.compute(), IndexError);
  EXPECT_EQ(monitor.step(), 0);
}

}  // namespace
}  // namespace tokbench
