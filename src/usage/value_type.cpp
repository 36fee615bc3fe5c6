// value_type.hpp.
#include "usage/value_type.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <string>

namespace tokbench::usage {

const char* describe(ValueType type) {
  switch (type) {
    case ValueType::text: return "text";
    case ValueType::whole_number: return "a whole number";
    case ValueType::number: return "a number";
    case ValueType::boolean: return "true or false";
  }
  return "text";
}

bool text_is(ValueType type, std::string_view text) {
  switch (type) {
    case ValueType::text:
      return true;
    case ValueType::whole_number: {
      std::string_view digits = text;
      if (!digits.empty() && (digits.front() == '+' || digits.front() == '-')) digits.remove_prefix(1);
      return !digits.empty() && std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; });
    }
    case ValueType::number: {
      // strtod skips leading blanks and reads "inf"/"nan"; neither is a value a run takes.
      if (text.empty() || std::isspace(static_cast<unsigned char>(text.front()))) return false;
      const std::string copy(text);
      char* end = nullptr;
      const double value = std::strtod(copy.c_str(), &end);  // LC_NUMERIC is "C" (cli/main.cpp)
      return end == copy.c_str() + copy.size() && std::isfinite(value);
    }
    case ValueType::boolean:
      return text == "true" || text == "false" || text == "True" || text == "False";
  }
  return false;
}

}  // namespace tokbench::usage
