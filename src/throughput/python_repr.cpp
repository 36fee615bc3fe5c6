// python_repr(double): CPython's float repr, needed because Lightning's error texts embed
// values with str(). std::to_chars gives the shortest round-trip digits; we only re-layout them
// the way CPython's 'r' format does (fixed for decimal exponents -4..15, else d.ddde+XX).
#include <charconv>
#include <cmath>
#include <string>

#include "tokbench/throughput.hpp"

namespace tokbench {

std::string python_repr(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";

  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, value, std::chars_format::scientific);
  std::string sci(buf, end);  // "-1.2345e+07": sign, digits with one '.', exponent
  std::string out;
  std::size_t pos = 0;
  if (sci[0] == '-') {
    out.push_back('-');
    pos = 1;
  }
  const std::size_t e_pos = sci.find('e');
  std::string digits;
  for (std::size_t i = pos; i < e_pos; ++i)
    if (sci[i] != '.') digits.push_back(sci[i]);
  const int exponent = std::stoi(sci.substr(e_pos + 1));
  // CPython: decpt = exponent + 1 (digits read as 0.d1d2... x 10^decpt); exponent form when
  // decpt <= -4 or decpt > 16.
  const int decpt = exponent + 1;
  if (decpt > -4 && decpt <= 16) {
    if (decpt <= 0) {
      out += "0.";
      out.append(static_cast<std::size_t>(-decpt), '0');
      out += digits;
    } else if (static_cast<std::size_t>(decpt) >= digits.size()) {
      out += digits;
      out.append(static_cast<std::size_t>(decpt) - digits.size(), '0');
      out += ".0";
    } else {
      out += digits.substr(0, static_cast<std::size_t>(decpt));
      out += '.';
      out += digits.substr(static_cast<std::size_t>(decpt));
    }
    return out;
  }
  out += digits[0];
  if (digits.size() > 1) {
    out += '.';
    out += digits.substr(1);
  }
  out += 'e';
  out += exponent < 0 ? '-' : '+';
  const int magnitude = exponent < 0 ? -exponent : exponent;
  if (magnitude < 10) out += '0';
  out += std::to_string(magnitude);
  return out;
}

std::string MetricValue::to_string() const {
  return is_integer ? std::to_string(as_int()) : python_repr(value);
}

}  // namespace tokbench
