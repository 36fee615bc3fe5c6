// check_fields (checks.hpp): one generic pass over the rows, each field's value checked
// against its own choices or bounds, refused with the line the row names.
#include "config/checks.hpp"

#include <fmt/format.h>

#include <cmath>
#include <optional>
#include <string>
#include <type_traits>

#include "usage/usage_error.hpp"

namespace tokbench::config {
namespace {

// The option's name in a refusal: its first (kebab-case) name.
std::string option_name(const Field& field) {
  const std::string names = field.names;
  return names.substr(0, names.find(','));
}

template <typename T>
void check_number(const Field& field, T value) {
  const Bounds& b = field.bounds;
  if (b.positive && value <= 0)
    usage::refuse(fmt::format("{} {} must be a positive integer", option_name(field), value));
  const auto v = static_cast<double>(value);
  const bool low = b.min && (b.min_open ? !(v > *b.min) : !(v >= *b.min));
  const bool high = b.max && (b.max_open ? !(v < *b.max) : !(v <= *b.max));
  // Not finite (NaN, inf: only a caller that sets the member itself can make one) is outside any bounds.
  if (low || high || (b.whole && std::floor(v) != v) || (!b.refusal.empty() && !std::isfinite(v)))
    usage::refuse(fmt::format("{} {} {}", option_name(field), value, b.refusal));
}

template <typename T>
void check_value(const Field& field, const T& value) {
  if constexpr (std::is_same_v<T, std::string>) {
    if (field.choices == nullptr || (field.empty_is_default && value.empty())) return;
    usage::require_choice(option_name(field), value, field.choices());
  } else if constexpr (std::is_arithmetic_v<T> && !std::is_same_v<T, bool>) {
    check_number(field, value);
  }
}

template <typename T>
void check_value(const Field& field, const std::optional<T>& value) {
  if (value) check_value(field, *value);
}

}  // namespace

void check_fields(const RunOptions& options) {
  for (const Field* field : all_fields()) {
    std::visit([&](auto pointer) { check_value(*field, options.*pointer); }, field->member);
    if (field->refuse_with == nullptr) continue;
    if (const std::string refusal = field->refuse_with(options); !refusal.empty()) usage::refuse(refusal);
  }
}

}  // namespace tokbench::config
