// int64 arithmetic that throws std::overflow_error naming the model instead of wrapping.
// Counts of parameters, FLOPs and bytes are exact integers; a count that does not fit in
// int64 is an error the user should see, never a silently negative number.
// checked_mul / checked_add are the non-throwing forms, for callers that word the error
// themselves (option validation names the options whose product overflows).
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>

#include "model/config.hpp"

namespace tokbench::model {

// a × b × ..., or nullopt when any partial product overflows int64.
inline std::optional<int64_t> checked_mul(int64_t a, int64_t b) {
  int64_t out;
  if (__builtin_mul_overflow(a, b, &out)) return std::nullopt;
  return out;
}
template <typename... Rest>
std::optional<int64_t> checked_mul(int64_t a, int64_t b, Rest... rest) {
  const std::optional<int64_t> head = checked_mul(a, b);
  if (!head) return std::nullopt;
  return checked_mul(*head, rest...);
}

// a + b + ..., or nullopt when any partial sum overflows int64.
inline std::optional<int64_t> checked_add(int64_t a, int64_t b) {
  int64_t out;
  if (__builtin_add_overflow(a, b, &out)) return std::nullopt;
  return out;
}
template <typename... Rest>
std::optional<int64_t> checked_add(int64_t a, int64_t b, Rest... rest) {
  const std::optional<int64_t> head = checked_add(a, b);
  if (!head) return std::nullopt;
  return checked_add(*head, rest...);
}

class CheckedInt {
 public:
  explicit CheckedInt(const Config& config) : name_(config.name.empty() ? "(unnamed)" : config.name) {}
  int64_t mul(int64_t a, int64_t b) const {
    int64_t out;
    if (__builtin_mul_overflow(a, b, &out)) fail(fmt::format("{} × {}", a, b));
    return out;
  }
  template <typename... Rest>
  int64_t mul(int64_t a, int64_t b, Rest... rest) const {
    return mul(mul(a, b), rest...);
  }
  int64_t add(int64_t a, int64_t b) const {
    int64_t out;
    if (__builtin_add_overflow(a, b, &out)) fail(fmt::format("{} + {}", a, b));
    return out;
  }
  template <typename... Rest>
  int64_t add(int64_t a, int64_t b, Rest... rest) const {
    return add(add(a, b), rest...);
  }
  int64_t sub(int64_t a, int64_t b) const {
    int64_t out;
    if (__builtin_sub_overflow(a, b, &out)) fail(fmt::format("{} - {}", a, b));
    return out;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw std::overflow_error(fmt::format("count for model '{}' overflows int64 at {}", name_, what));
  }
  std::string name_;
};

}  // namespace tokbench::model
