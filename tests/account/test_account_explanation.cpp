// Two hand-made accounts explained against each other: the differences per category, their sum
// (the difference of the iteration times), and the sentence's order, wording and remainder.
#include <gtest/gtest.h>

#include "account/explanation.hpp"

namespace tokbench::account {
namespace {

// An account of `iteration` seconds with the given seconds per category (the rest in other).
TimeAccount account(double iteration, std::initializer_list<std::pair<Category, double>> parts) {
  TimeAccount a;
  a.iteration_seconds = iteration;
  double listed = 0;
  for (const auto& [c, seconds] : parts) {
    a.categories[index_of(c)].seconds = seconds;
    listed += seconds;
  }
  a.categories[index_of(Category::other)].seconds += iteration - listed;
  return a;
}

// base 300 ms: GEMM 120, elementwise 80, loss 30, normalization 20, optimizer 10, other 40.
// run 210 ms: GEMM 123, elementwise 39, loss 18, normalization 19.5, optimizer 10, other 0.5.
//   elementwise −41, other −39.5, loss −12, GEMM +3; normalization −0.5 is under 1% of 300 ms
//   (3 ms): netted elsewhere. Σ = −90.
TEST(Explanation, DifferencesSumToTheIterationAndTheSentenceSaysTheLargestFirst) {
  const TimeAccount base = account(0.300, {{Category::gemm, 0.120}, {Category::elementwise, 0.080},
                                           {Category::loss, 0.030}, {Category::normalization, 0.020},
                                           {Category::optimizer, 0.010}});
  const TimeAccount run = account(0.210, {{Category::gemm, 0.123}, {Category::elementwise, 0.039},
                                          {Category::loss, 0.018}, {Category::normalization, 0.0195},
                                          {Category::optimizer, 0.010}});
  const Explanation e = explain(base, run, "python-eager", "fused");
  double sum = 0;
  for (const Category c : all_categories()) sum += e.difference(c);
  EXPECT_NEAR(sum, e.iteration_difference(), 1e-12);
  EXPECT_NEAR(e.iteration_difference(), -0.090, 1e-12);
  EXPECT_NEAR(e.difference(Category::elementwise), -0.041, 1e-12);
  EXPECT_NEAR(e.difference(Category::gemm), 0.003, 1e-12);
  EXPECT_EQ(explanation_sentence(e),
            "fused saves 41.0 ms of elementwise work, 39.5 ms of other time and 12.0 ms of loss; it loses 3.0 ms "
            "of GEMM time, and nets -0.5 ms elsewhere: 90.0 ms faster per iteration than python-eager.");
  const auto json = to_json(e);
  EXPECT_NEAR(json["categories"]["loss"]["difference_ms"].get<double>(), -12.0, 1e-9);
  EXPECT_NEAR(json["iteration_ms"]["difference"].get<double>(), -90.0, 1e-9);
}

TEST(Explanation, OnlyLossesAndNoChange) {
  const TimeAccount base = account(0.100, {{Category::gemm, 0.060}});
  const TimeAccount slower = account(0.110, {{Category::gemm, 0.070}});
  EXPECT_EQ(explanation_sentence(explain(base, slower, "a", "b")),
            "b loses 10.0 ms of GEMM time: 10.0 ms slower per iteration than a.");
  EXPECT_EQ(explanation_sentence(explain(base, base, "a", "b")),
            "b spends its time as a does: 0.0 ms faster per iteration than a.");
}

}  // namespace
}  // namespace tokbench::account
