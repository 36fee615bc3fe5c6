// Precision names and MFU. Parsing accepts the spellings users bring from torch and Lightning
// so a CLI flag or a config file can name the dtype however it is written there.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <string>

#include "tokbench/throughput.hpp"

namespace tokbench {

std::string_view to_string(Precision precision) {
  switch (precision) {
    case Precision::fp64: return "fp64";
    case Precision::fp32: return "fp32";
    case Precision::tf32: return "tf32";
    case Precision::bf16: return "bf16";
    case Precision::fp16: return "fp16";
    case Precision::fp8: return "fp8";
    case Precision::int8: return "int8";
  }
  return "unknown";
}

std::optional<Precision> precision_from_string(std::string_view text) {
  std::string s(text);
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (s.rfind("torch.", 0) == 0) s.erase(0, 6);
  struct Alias {
    std::string_view name;
    Precision precision;
  };
  static constexpr Alias kAliases[] = {
      {"fp64", Precision::fp64}, {"float64", Precision::fp64}, {"double", Precision::fp64},
      {"f64", Precision::fp64}, {"64", Precision::fp64}, {"64-true", Precision::fp64},
      {"fp32", Precision::fp32}, {"float32", Precision::fp32}, {"float", Precision::fp32},
      {"f32", Precision::fp32}, {"32", Precision::fp32}, {"32-true", Precision::fp32},
      {"tf32", Precision::tf32}, {"tfloat32", Precision::tf32},
      {"bf16", Precision::bf16}, {"bfloat16", Precision::bf16}, {"bf16-mixed", Precision::bf16},
      {"bf16-true", Precision::bf16},
      {"fp16", Precision::fp16}, {"float16", Precision::fp16}, {"half", Precision::fp16},
      {"f16", Precision::fp16}, {"16", Precision::fp16}, {"16-mixed", Precision::fp16},
      {"16-true", Precision::fp16},
      {"fp8", Precision::fp8}, {"float8", Precision::fp8}, {"float8_e4m3fn", Precision::fp8},
      {"float8_e5m2", Precision::fp8}, {"transformer-engine", Precision::fp8},
      {"int8", Precision::int8},
  };
  for (const auto& alias : kAliases)
    if (alias.name == s) return alias.precision;
  return std::nullopt;
}

std::optional<double> mfu(double achieved_flops_per_s_per_device,
                          std::optional<double> peak_flops_per_s) {
  // "Unknown" stays explicit (docs/PERFORMANCE.md, "The contract"): no peak, or a nonsensical
  // one, gives no MFU.
  if (!peak_flops_per_s.has_value() || !std::isfinite(*peak_flops_per_s) ||
      *peak_flops_per_s <= 0.0)
    return std::nullopt;
  return achieved_flops_per_s_per_device / *peak_flops_per_s;
}

}  // namespace tokbench
