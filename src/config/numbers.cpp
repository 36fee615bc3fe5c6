// The parse-time number checks of numbers.hpp.
#include "config/numbers.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <type_traits>

#include "usage/usage_error.hpp"

namespace tokbench::config {
namespace {

std::string refusal(const std::string& text, const std::string& valid) {
  return fmt::format("'{}' is not valid; valid: {}", usage::printable(text), valid);
}

}  // namespace

template <typename T>
CLI::Validator whole_number(const std::string& valid) {
  static_assert(std::is_integral_v<T>);
  return CLI::Validator(
      [valid](std::string& text) -> std::string {
        const char* first = text.data();
        const char* const last = first + text.size();
        bool negative = false;
        if (first != last && (*first == '+' || *first == '-')) negative = *first++ == '-';
        if (first == last || !std::all_of(first, last, [](char c) { return c >= '0' && c <= '9'; }))
          return refusal(text, valid);
        if (negative && std::is_unsigned_v<T>) return refusal(text, valid);
        // Base 10 always, and out-of-range is an error (strtoll would saturate).
        T value{};
        std::string digits;
        if (negative) digits.push_back('-');
        digits.append(first, last);
        const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
        if (error != std::errc() || end != digits.data() + digits.size()) return refusal(text, valid);
        text = std::to_string(value);  // what CLI11 converts next: no leading zero (octal), no sign
        return {};
      },
      "", "");
}
template CLI::Validator whole_number<int>(const std::string&);
template CLI::Validator whole_number<int64_t>(const std::string&);
template CLI::Validator whole_number<uint64_t>(const std::string&);

CLI::Validator finite_number(const std::string& valid) {
  return CLI::Validator(
      [valid](std::string& text) -> std::string {
        if (text.empty() || std::isspace(static_cast<unsigned char>(text.front()))) return refusal(text, valid);
        char* end = nullptr;
        const double value = std::strtod(text.c_str(), &end);  // LC_NUMERIC is "C" (main)
        if (end != text.c_str() + text.size() || !std::isfinite(value)) return refusal(text, valid);
        return {};
      },
      "", "");
}

}  // namespace tokbench::config
