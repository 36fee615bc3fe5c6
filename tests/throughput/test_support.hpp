// Helpers shared by the throughput tests: capture warnings through the pluggable sink and
// compare metric lists in order, with exact doubles (Lightning's tests compare with ==).
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "tokbench/throughput.hpp"

namespace tokbench::testing {

// Installs a collecting warning sink for its lifetime and restores the previous one after.
class CapturedWarnings {
 public:
  CapturedWarnings()
      : previous_(set_warning_sink([this](std::string_view m) { messages.emplace_back(m); })) {}
  ~CapturedWarnings() { set_warning_sink(std::move(previous_)); }
  CapturedWarnings(const CapturedWarnings&) = delete;
  CapturedWarnings& operator=(const CapturedWarnings&) = delete;
  std::vector<std::string> messages;

 private:
  WarningSink previous_;
};

using Expected = std::vector<std::pair<std::string, double>>;

inline std::string describe(const Metrics& m) {
  std::string s = "{";
  for (const auto& [k, v] : m) s += "\"" + k + "\": " + python_repr(v) + ", ";
  return s + "}";
}

// Same keys in the same order and == on every value.
inline ::testing::AssertionResult SameMetrics(const Metrics& actual, const Expected& expected) {
  if (actual.size() != expected.size())
    return ::testing::AssertionFailure() << "size " << actual.size() << " != " << expected.size()
                                         << ": " << describe(actual);
  for (std::size_t i = 0; i < actual.size(); ++i) {
    if (actual[i].first != expected[i].first || !(actual[i].second == expected[i].second))
      return ::testing::AssertionFailure()
             << "entry " << i << ": got " << actual[i].first << "=" << python_repr(actual[i].second)
             << ", want " << expected[i].first << "=" << python_repr(expected[i].second) << " in "
             << describe(actual);
  }
  return ::testing::AssertionSuccess();
}

inline Metrics untyped(const TypedMetrics& typed) {
  Metrics m;
  for (const auto& [k, v] : typed) m.emplace_back(k, v.value);
  return m;
}

// Runs `f`, expecting exception type E with exactly `message` as what().
template <typename E, typename F>
::testing::AssertionResult ThrowsWithMessage(F&& f, const std::string& message) {
  try {
    f();
  } catch (const E& e) {
    if (message == e.what()) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << "message \"" << e.what() << "\" != \"" << message << "\"";
  } catch (const std::exception& e) {
    return ::testing::AssertionFailure() << "wrong exception type: " << e.what();
  }
  return ::testing::AssertionFailure() << "nothing thrown";
}

}  // namespace tokbench::testing
