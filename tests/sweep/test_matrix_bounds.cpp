// The expansion bound: counted from the axes before anything is built, over all matrices of a
// sweep, with the count that tripped it named.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "sweep/matrix.hpp"

namespace tokbench::sweep {
namespace {

Matrix grid(int axes, int values) {
  Matrix m;
  for (int a = 0; a < axes; ++a) {
    Axis axis{fmt::format("x{}", a), {}};  // not "x" + std::to_string(a): GCC 12 misreads it (-Wrestrict)
    for (int v = 0; v < values; ++v) axis.values.push_back(std::to_string(v));
    m.axes.push_back(axis);
  }
  return m;
}

std::string refusal(const std::vector<Matrix>& matrices, std::size_t limit) {
  try {
    (void)expand_all(matrices, limit);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(MatrixBounds, CountIsTheProductOfTheAxesAndOverflowIsNoCount) {
  EXPECT_EQ(configuration_count(grid(3, 7)), 343u);
  EXPECT_EQ(configuration_count(Matrix{}), 1u);
  // 100 axes of 1000 values: 10^300 configurations; counting must neither overflow nor build any.
  EXPECT_EQ(configuration_count(grid(100, 1000)), std::nullopt);
}

TEST(MatrixBounds, OneMatrixPastTheBoundIsRefusedNamingItsAxes) {
  const std::string why = refusal({grid(100, 1000)}, kMaxConfigurations);
  EXPECT_NE(why.find("1000 x0 x 1000 x1"), std::string::npos) << why;
  EXPECT_NE(why.find("more than 2^64"), std::string::npos) << why;
  EXPECT_NE(why.find("at most 10000"), std::string::npos) << why;
}

TEST(MatrixBounds, SeveralMatricesCountTogether) {
  // 60 + 60 configurations, each matrix under a bound of 100 but not both.
  const std::string why = refusal({grid(2, 6), grid(1, 60), grid(2, 8)}, 100);
  EXPECT_NE(why.find("8 x0 x 8 x1 = 64"), std::string::npos) << why;
  EXPECT_EQ(refusal({grid(2, 6), grid(1, 60)}, 100), "");
  EXPECT_EQ(expand_all({grid(2, 6), grid(1, 60)}, 100).size(), 96u);
  // A matrix given twice runs each configuration once, yet counts twice against the bound: the
  // bound is on what was written, decided before anything is built.
  EXPECT_EQ(expand_all({grid(2, 6), grid(2, 6)}, 100).size(), 36u);
  EXPECT_NE(refusal({grid(2, 6), grid(2, 6)}, 50), "");
}

}  // namespace
}  // namespace tokbench::sweep
