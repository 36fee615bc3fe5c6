// Integer FLOPs behave as Python ints (the expected values are what Lightning 2.6.6 returns):
// the argument's type picks the overload, products and window sums are exact past 2^53 and past
// 2^127, and a window turns float at its first float entry, as Python's left-to-right sum().
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <optional>
#include <vector>

#include "tokbench/throughput.hpp"

namespace tokbench {
namespace {

constexpr int64_t kTwo53 = int64_t{1} << 53;
constexpr int64_t kMax = INT64_MAX;

ThroughputOptions options(int64_t window, int64_t world_size = 1) {
  ThroughputOptions o;
  o.window_size = window;
  o.world_size = world_size;
  return o;
}

// "device/flops_per_sec" after one update per flops value at times 1, 2, 3, ...
template <typename Flops>
double device_flops_per_sec(Throughput& t, const std::vector<Flops>& flops) {
  for (std::size_t i = 0; i < flops.size(); ++i) {
    const auto n = static_cast<int64_t>(i) + 1;
    t.update(static_cast<double>(n), n, n, std::nullopt, flops[i]);
  }
  const Metrics m = t.compute();
  EXPECT_EQ(m.back().first, "device/flops_per_sec");
  return m.back().second;
}

TEST(IntegerFlops, ExactPast2To53WhereFloatsRound) {
  // Python: (2**53 + 1) - 2**53 == 1 exactly; as floats 2**53 + 1.0 rounds back to 2**53.
  Throughput ints(options(2));
  EXPECT_EQ(device_flops_per_sec(ints, std::vector<int64_t>{kTwo53, 1}), 1.0);
  Throughput floats(options(2));
  EXPECT_EQ(device_flops_per_sec(floats, std::vector<double>{0x1p53, 1.0}), 0.0);
}

TEST(IntegerFlops, ArgumentTypePicksTheOverload) {
  auto flops_per_sec = [](auto first, auto second) {
    Throughput t(options(2));
    t.update(1.0, 1, 1, std::nullopt, first);
    t.update(2.0, 2, 2, std::nullopt, second);
    return t.compute().back().second;
  };
  EXPECT_EQ(flops_per_sec(kTwo53, 1), 1.0);  // int64_t, then an int literal
  EXPECT_EQ(flops_per_sec(std::optional<int64_t>(kTwo53), std::optional<int64_t>(1)), 1.0);
  EXPECT_EQ(flops_per_sec(static_cast<double>(kTwo53), 1.0), 0.0);
  EXPECT_EQ(flops_per_sec(std::optional<double>(0x1p53), std::optional<double>(1.0)), 0.0);
  // An empty optional<int> passes no flops, like None.
  Throughput t(options(2));
  t.update(1.0, 1, 1, std::nullopt, std::optional<int64_t>());
  EXPECT_EQ(t.flops_window_size(), 0u);
}

TEST(IntegerFlops, WindowTurnsFloatAtTheFirstFloat) {
  // Ints before the first float are summed exactly and rounded once: 2**53 + 2 + 0.0.
  Throughput int_prefix(options(4));
  int_prefix.update(1.0, 1, 1, std::nullopt, kTwo53);
  int_prefix.update(2.0, 2, 2, std::nullopt, 1);
  int_prefix.update(3.0, 3, 3, std::nullopt, 1);
  int_prefix.update(4.0, 4, 4, std::nullopt, 0.0);
  EXPECT_EQ(int_prefix.compute().back().second, 2.0 / 3.0);
  // Same values, float second: each later int is rounded into a float sum (2**53 + 1 -> 2**53).
  Throughput float_early(options(4));
  float_early.update(1.0, 1, 1, std::nullopt, kTwo53);
  float_early.update(2.0, 2, 2, std::nullopt, 0.0);
  float_early.update(3.0, 3, 3, std::nullopt, 1);
  float_early.update(4.0, 4, 4, std::nullopt, 1);
  EXPECT_EQ(float_early.compute().back().second, 0.0);
}

TEST(IntegerFlops, SumsPast2To127StayExact) {
  // (2**63 - 1) flops on 2**63 - 1 ranks: each product is ~2**126, the window sum ~3 * 2**126.
  Throughput big(options(3, kMax));
  for (int64_t i = 1; i <= 3; ++i) big.update(static_cast<double>(i), i, i, std::nullopt, kMax);
  const Metrics m = big.compute();
  EXPECT_EQ(m[m.size() - 2].second, 0x1p126);  // 2 * (2**63 - 1)**2 rounds to 2**127, / 2 s
  EXPECT_EQ(m.back().second, 0x1p63);
  Throughput negative(options(3, kMax));
  EXPECT_EQ(device_flops_per_sec(negative, std::vector<int64_t>{INT64_MIN, INT64_MIN, INT64_MIN}),
            -0x1p63);
}

TEST(IntegerFlops, MonitorForwardsIntegersExactly) {
  ThroughputMonitor rank0(options(2), 0);
  rank0.update(1.0, 1, 1, std::nullopt, kTwo53);
  rank0.update(2.0, 2, 2, std::nullopt, int64_t{1});
  EXPECT_EQ(rank0.compute().back().second, 1.0);
  ThroughputMonitor rank1(options(2), 1);
  rank1.update(1.0, 1, 1, std::nullopt, kTwo53);
  EXPECT_EQ(rank1.throughput().flops_window_size(), 0u);
}

}  // namespace
}  // namespace tokbench
