// Iteration-time statistics against values computed by hand (numpy's linear percentiles).
#include <gtest/gtest.h>

#include "run/iter_stats.hpp"

namespace tokbench::run {
namespace {

TEST(IterStats, EmptyIsUnknown) { EXPECT_FALSE(summarize({}).has_value()); }

TEST(IterStats, KnownValues) {
  auto s = summarize({4, 1, 3, 2, 10});
  ASSERT_TRUE(s);
  EXPECT_EQ(s->count, 5);
  EXPECT_DOUBLE_EQ(s->mean, 4.0);
  EXPECT_DOUBLE_EQ(s->median, 3.0);
  EXPECT_DOUBLE_EQ(s->min, 1.0);
  EXPECT_DOUBLE_EQ(s->max, 10.0);
  EXPECT_DOUBLE_EQ(s->p10, 1.4);  // numpy.percentile([1,2,3,4,10], 10)
  EXPECT_DOUBLE_EQ(s->p90, 7.6);  // numpy.percentile([1,2,3,4,10], 90)
  EXPECT_NEAR(s->stddev, 3.5355339059327378, 1e-12);  // sample stddev, ddof=1
  EXPECT_NEAR(s->cv, 3.5355339059327378 / 4.0, 1e-12);
}

TEST(IterStats, SingleValueHasNoSpread) {
  auto s = summarize({7});
  ASSERT_TRUE(s);
  EXPECT_DOUBLE_EQ(s->median, 7);
  EXPECT_DOUBLE_EQ(s->stddev, 0);
}

}  // namespace
}  // namespace tokbench::run
