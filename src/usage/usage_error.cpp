// usage_error.hpp.
#include "usage/usage_error.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <optional>
#include <stdexcept>

#include "usage/likely_meant.hpp"

namespace tokbench::usage {

void refuse(const std::string& line) { throw std::invalid_argument(line); }

std::string printable(std::string_view value) {
  std::string out(value);
  for (char& c : out)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
  return out;
}

void require_choice(std::string_view option, const std::string& value, const std::vector<std::string>& valid,
                    std::string_view why) {
  if (std::find(valid.begin(), valid.end(), value) != valid.end()) return;
  const std::optional<std::string> meant = likely_meant(value, valid);
  refuse(fmt::format("{} '{}' is not valid{}{}; valid: {}", option, printable(value), why,
                     meant ? fmt::format(" (did you mean '{}'?)", *meant) : std::string(), fmt::join(valid, ", ")));
}

void require_choice(std::string_view option, const std::string& value, std::initializer_list<const char*> valid,
                    std::string_view why) {
  require_choice(option, value, std::vector<std::string>(valid.begin(), valid.end()), why);
}

}  // namespace tokbench::usage
