// python_repr must equal CPython's repr(float): Lightning's error texts embed floats with str().
// Hand-picked boundary cases here; ~200 more (random magnitudes) come from the fixture's
// repr_cases, produced by real CPython, in differential_test.cpp.
#include <gtest/gtest.h>

#include <limits>

#include "tokbench/throughput.hpp"

namespace tokbench {
namespace {

TEST(PythonRepr, BoundaryCases) {
  EXPECT_EQ(python_repr(2.0), "2.0");
  EXPECT_EQ(python_repr(2.5), "2.5");
  EXPECT_EQ(python_repr(0.1), "0.1");
  EXPECT_EQ(python_repr(-0.0), "-0.0");
  EXPECT_EQ(python_repr(0.0), "0.0");
  EXPECT_EQ(python_repr(1e16), "1e+16");
  EXPECT_EQ(python_repr(1e15), "1000000000000000.0");
  EXPECT_EQ(python_repr(9999999999999998.0), "9999999999999998.0");
  EXPECT_EQ(python_repr(1e-4), "0.0001");
  EXPECT_EQ(python_repr(1e-5), "1e-05");
  EXPECT_EQ(python_repr(1.5e-7), "1.5e-07");
  EXPECT_EQ(python_repr(1e22), "1e+22");
  EXPECT_EQ(python_repr(123456789.123), "123456789.123");
  EXPECT_EQ(python_repr(5e-324), "5e-324");
  EXPECT_EQ(python_repr(1.7976931348623157e308), "1.7976931348623157e+308");
  EXPECT_EQ(python_repr(std::numeric_limits<double>::infinity()), "inf");
  EXPECT_EQ(python_repr(-std::numeric_limits<double>::infinity()), "-inf");
  EXPECT_EQ(python_repr(std::numeric_limits<double>::quiet_NaN()), "nan");
  EXPECT_EQ(python_repr(-2.0), "-2.0");
  EXPECT_EQ(python_repr(12345678901234567.0), "1.2345678901234568e+16");
}

}  // namespace
}  // namespace tokbench
