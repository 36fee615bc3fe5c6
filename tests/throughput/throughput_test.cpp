// Lightning's test_throughput.py cases for Throughput itself (docs/throughput.md, "Tests and
// reference"): rates, key order, error texts and the no-rollback behaviour, the master-only
// sparse-model options, and the monotonic-window rules as they apply to our windows.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "test_support.hpp"
#include "tokbench/throughput.hpp"

namespace tokbench {
namespace {

using testing::CapturedWarnings;
using testing::SameMetrics;
using testing::ThrowsWithMessage;

ThroughputOptions window(int64_t size) {
  ThroughputOptions o;
  o.window_size = size;
  return o;
}

TEST(Throughput, LightningTestThroughput) {
  Throughput throughput;
  throughput.update(2.0, 1, 2);
  EXPECT_TRUE(SameMetrics(throughput.compute(), {{"time", 2.0}, {"batches", 1}, {"samples", 2}}));

  // Lengths on the second update only: time, batches, samples and lengths are appended first.
  EXPECT_TRUE(ThrowsWithMessage<RuntimeError>(
      [&] { throughput.update(2.1, 2, 3, 4); },
      "If lengths are passed (1), there needs to be the same number of samples (2)"));
  EXPECT_EQ(throughput.time_window_size(), 2u);
  EXPECT_EQ(throughput.lengths_window_size(), 1u);

  Throughput w2(window(2));
  w2.update(2, 1, 2, 4);
  w2.update(2.5, 2, 4, 8);
  EXPECT_TRUE(SameMetrics(w2.compute(), {{"time", 2.5},
                                         {"batches", 2},
                                         {"samples", 4},
                                         {"lengths", 8},
                                         {"device/batches_per_sec", 2.0},
                                         {"device/samples_per_sec", 4.0},
                                         {"device/items_per_sec", 8.0}}));
  // The time check fails first, before samples < batches would.
  EXPECT_TRUE(ThrowsWithMessage<ValueError>(
      [&] { w2.update(2.5, 3, 2, 4); }, "Expected the value to increase, last: 2.5, current: 2.5"));

  ThroughputOptions o = window(2);
  o.available_flops = 50;
  o.using_sparse_model = false;
  Throughput f(o);
  f.update(1, 1, 2, 10, 10);
  f.update(2, 2, 4, 20, 10);
  const testing::Expected with_mfu = {{"time", 2},
                                      {"batches", 2},
                                      {"samples", 4},
                                      {"lengths", 20},
                                      {"device/batches_per_sec", 1.0},
                                      {"device/samples_per_sec", 2.0},
                                      {"device/items_per_sec", 10.0},
                                      {"device/flops_per_sec", 10.0},
                                      {"device/mfu", 0.2}};
  EXPECT_TRUE(SameMetrics(f.compute(), with_mfu));

  f.set_available_flops(std::nullopt);
  f.reset();
  f.update(1, 1, 2, 10, 10);
  f.update(2, 2, 4, 20, 10);
  testing::Expected without_mfu(with_mfu.begin(), with_mfu.end() - 1);
  EXPECT_TRUE(SameMetrics(f.compute(), without_mfu));

  EXPECT_TRUE(ThrowsWithMessage<ValueError>(
      [] { Throughput(window(2)).update(0, 2, 1); },
      "Expected samples (1) to be greater or equal than batches (2)"));
  EXPECT_TRUE(ThrowsWithMessage<ValueError>(
      [] { Throughput(window(2)).update(0, 2, 2, 1); },
      "Expected lengths (1) to be greater or equal than samples (2)"));
}

TEST(Throughput, ExceptionsMapToStandardTypes) {
  Throughput t(window(2));
  t.update(1.0, 1, 1);
  EXPECT_THROW(t.update(1.0, 2, 2), std::invalid_argument);
  try {
    t.update(0.5, 2, 2);
    FAIL() << "no throw";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.where().file).find("throughput.cpp"), std::string::npos);
    EXPECT_GT(e.where().line, 0);
  }
  EXPECT_THROW(Throughput().compute(), std::out_of_range);
  EXPECT_TRUE(ThrowsWithMessage<IndexError>([] { Throughput().compute(); },
                                            "list index out of range"));
}

TEST(Throughput, ConstructorAssertions) {
  ThroughputOptions bad_ws;
  bad_ws.world_size = 0;
  EXPECT_TRUE(ThrowsWithMessage<AssertionError>([&] { Throughput{bad_ws}; }, ""));
  EXPECT_TRUE(ThrowsWithMessage<AssertionError>([] { Throughput{window(1)}; }, ""));
  // Order: the sparse-factor assert runs before the world-size one.
  ThroughputOptions both = bad_ws;
  both.sparse_cuda_acceleration_factor = 0.5;
  EXPECT_TRUE(ThrowsWithMessage<AssertionError>(
      [&] { Throughput{both}; }, "sparse acceleration factor cannot reduce peak FLOPs"));
  EXPECT_THROW(Throughput{both}, std::logic_error);
}

TEST(Throughput, SparseModelScaling) {
  auto peak = [](std::optional<double> flops, std::optional<bool> sparse, double factor = 2.0) {
    ThroughputOptions o;
    o.available_flops = flops;
    o.using_sparse_model = sparse;
    o.sparse_cuda_acceleration_factor = factor;
    return Throughput(o).available_flops();
  };
  EXPECT_EQ(peak(100.0, false), 100.0);
  EXPECT_EQ(peak(100.0, true), 200.0);
  EXPECT_EQ(peak(100.0, true, 4.0), 400.0);
  EXPECT_EQ(peak(std::nullopt, true), std::nullopt);
  EXPECT_TRUE(ThrowsWithMessage<AssertionError>(
      [&] { peak(100.0, true, 0.5); }, "sparse acceleration factor cannot reduce peak FLOPs"));
}

TEST(Throughput, SparseModelWarning) {
  {
    CapturedWarnings w;
    ThroughputOptions o;
    o.available_flops = 100.0;
    Throughput t(o);
    ASSERT_EQ(w.messages.size(), 1u);
    EXPECT_EQ(w.messages[0],
              "MFU assumes dense model FLOPs (no sparsity acceleration). Set "
              "'using_sparse_model=True' for MFU to use sparse FLOPs.");
    EXPECT_EQ(t.available_flops(), 100.0);
  }
  for (bool sparse : {true, false}) {
    CapturedWarnings w;
    ThroughputOptions o;
    o.available_flops = 100.0;
    o.using_sparse_model = sparse;
    Throughput t(o);
    EXPECT_TRUE(w.messages.empty());
  }
  CapturedWarnings w;
  Throughput t;
  EXPECT_TRUE(w.messages.empty());
}

TEST(Throughput, SparseModelMfu) {
  for (bool sparse : {false, true}) {
    ThroughputOptions o = window(2);
    o.available_flops = 50;
    o.using_sparse_model = sparse;
    Throughput t(o);
    t.update(1, 1, 2, std::nullopt, 10);
    t.update(2, 2, 4, std::nullopt, 10);
    const Metrics m = t.compute();
    ASSERT_EQ(m.back().first, "device/mfu");
    EXPECT_EQ(m.back().second, sparse ? 0.1 : 0.2);
  }
}

TEST(Throughput, MonotonicWindowSemantics) {
  // Lightning's test_monotonic_window, through the public API: strict increase, FIFO of 3,
  // and clear() (reset) lets smaller values in again.
  Throughput t(window(3));
  t.update(1, 1, 1);
  t.update(2, 2, 2);
  t.update(3, 3, 3);
  t.update(4, 4, 4);  // evicts time 1: rates now span 2 -> 4
  EXPECT_EQ(t.time_window_size(), 3u);
  EXPECT_EQ(t.compute()[3].second, 1.0);  // (4-2 batches) / (4-2 s)
  EXPECT_TRUE(ThrowsWithMessage<ValueError>([&] { t.update(5, 4, 5); },
                                            "Expected the value to increase, last: 4, current: 4"));
  t.reset();
  EXPECT_EQ(t.time_window_size(), 0u);
  EXPECT_NO_THROW(t.update(2, 2, 2));
}

TEST(Throughput, NoRollbackAfterFailedUpdate) {
  Throughput t(window(2));
  t.update(1.0, 1, 1);
  // samples < batches: the time 2.0 is already in the window, so retrying it now fails on time.
  EXPECT_THROW(t.update(2.0, 5, 4), ValueError);
  EXPECT_TRUE(ThrowsWithMessage<ValueError>(
      [&] { t.update(2.0, 5, 6); }, "Expected the value to increase, last: 2.0, current: 2.0"));
}

TEST(Throughput, GlobalMetricsOrderWithWorldSize) {
  ThroughputOptions o = window(2);
  o.world_size = 4;
  o.available_flops = 8.0;
  o.using_sparse_model = false;
  o.separator = "|";
  Throughput t(o);
  t.update(1.0, 1, 2, 6, 3.0);
  t.update(3.0, 3, 6, 18, 5.0);
  EXPECT_TRUE(SameMetrics(t.compute(), {{"time", 3.0},
                                        {"batches", 3},
                                        {"samples", 6},
                                        {"lengths", 18},
                                        {"device|batches_per_sec", 1.0},
                                        {"device|samples_per_sec", 2.0},
                                        {"batches_per_sec", 4.0},
                                        {"samples_per_sec", 8.0},
                                        {"device|items_per_sec", 6.0},
                                        {"items_per_sec", 24.0},
                                        {"flops_per_sec", 10.0},  // (12+20-12)/2
                                        {"device|flops_per_sec", 2.5},
                                        {"device|mfu", 2.5 / 8.0}}));
}

TEST(Throughput, ZeroPeakGivesNoMfuAndTypedCounters) {
  ThroughputOptions o = window(2);
  o.available_flops = 0.0;
  o.using_sparse_model = false;
  Throughput t(o);
  t.update(1.0, 1, 1, std::nullopt, 1.0);
  t.update(2.0, 2, 2, std::nullopt, 1.0);
  const TypedMetrics typed = t.compute_typed();
  EXPECT_EQ(typed.back().first, "device/flops_per_sec");
  EXPECT_FALSE(typed[0].second.is_integer);  // time
  EXPECT_TRUE(typed[1].second.is_integer);   // batches
  EXPECT_EQ(typed[1].second.to_string(), "2");
  EXPECT_EQ(typed[0].second.to_string(), "2.0");
}

TEST(Throughput, HugeFlopsDoNotOverflow) {
  // 1e15 FLOPs per interval x 1024 ranks x 100 intervals ~ 1e20: past int64, fine in double.
  ThroughputOptions o;
  o.world_size = 1024;
  Throughput t(o);
  for (int i = 1; i <= 100; ++i) t.update(i, i, i, std::nullopt, 1e15);
  const Metrics m = t.compute();
  ASSERT_EQ(m[m.size() - 2].first, "flops_per_sec");
  EXPECT_EQ(m[m.size() - 2].second, 1e15 * 1024 * 99 / 99.0);
  EXPECT_EQ(m.back().second, 1e15);
}

TEST(Throughput, ComputeIntoReusesAndMatchesCompute) {
  Throughput t(window(3));
  Metrics out = {{"stale", 1.0}, {"x", 2.0}, {"y", 3.0}, {"z", 4.0}, {"w", 5.0}};
  for (int i = 1; i <= 5; ++i) {
    t.update(i * 0.5, i, 2 * i, 3 * i, 7.0);
    t.compute_into(out);
    EXPECT_EQ(out, t.compute());
  }
}

TEST(Throughput, SeparatorChangeRebuildsKeys) {
  Throughput t(window(2));
  t.set_separator("::");
  t.update(1, 1, 1);
  t.update(2, 2, 2);
  EXPECT_EQ(t.compute()[3].first, "device::batches_per_sec");
  EXPECT_THROW(t.set_world_size(0), AssertionError);
}

TEST(Throughput, NanTimePassesTheMonotonicCheckLikePython) {
  // Python's `last >= x` is False for NaN, so NaN is appended; we keep that.
  Throughput t(window(2));
  t.update(1.0, 1, 1);
  EXPECT_NO_THROW(t.update(std::numeric_limits<double>::quiet_NaN(), 2, 2));
  EXPECT_TRUE(std::isnan(t.compute()[0].second));
}

}  // namespace
}  // namespace tokbench

namespace tokbench {
namespace {

TEST(Throughput, ComputeAfterFailedFirstUpdateIsIndexError) {
  // The time is appended, then samples < batches raises: batches is still empty, and Python's
  // compute() fails reading _batches[-1].
  Throughput t;
  EXPECT_THROW(t.update(1.0, 2, 1), ValueError);
  EXPECT_TRUE(testing::ThrowsWithMessage<IndexError>([&] { t.compute(); }, "list index out of range"));
}

}  // namespace
}  // namespace tokbench
