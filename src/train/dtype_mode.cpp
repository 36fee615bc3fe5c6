// Dtype-mode names, parameter dtypes and the device capability check (dtype_mode.hpp).
#include "train/dtype_mode.hpp"

#include <algorithm>
#include <cctype>
#include <stdexcept>

#include "train/cuda_support.hpp"

namespace tokbench::train {

const char* to_string(DtypeMode mode) {
  switch (mode) {
    case DtypeMode::fp32: return "fp32";
    case DtypeMode::bf16_true: return "bf16-true";
    case DtypeMode::bf16_mixed: return "bf16-mixed";
  }
  return "unknown";
}

DtypeMode parse_dtype(std::string_view name) {
  std::string lower(name);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  std::replace(lower.begin(), lower.end(), '_', '-');
  if (lower == "fp32" || lower == "32-true" || lower == "32" || lower == "float32") return DtypeMode::fp32;
  if (lower == "bf16-true" || lower == "bf16" || lower == "bfloat16") return DtypeMode::bf16_true;
  if (lower == "bf16-mixed") return DtypeMode::bf16_mixed;
  throw std::invalid_argument("--dtype: unknown value '" + std::string(name) +
                              "'; valid: fp32, bf16-true, bf16-mixed (aliases: 32-true, bf16)");
}

c10::ScalarType param_dtype(DtypeMode mode) {
  return mode == DtypeMode::bf16_true ? c10::kBFloat16 : c10::kFloat;
}

bool dtype_supported(DtypeMode mode, const c10::Device& device, std::string* why) {
  if (device.is_cpu()) return true;
  if (!device.is_cuda()) {
    if (why) *why = "device " + device.str() + " is not supported (valid: cpu, cuda, cuda:N)";
    return false;
  }
  int major = 0;
  int minor = 0;
  if (!cuda_support::compute_capability(device.has_index() ? device.index() : 0, &major, &minor, why)) {
    return false;
  }
  if (mode != DtypeMode::fp32 && major < 8) {
    if (why) {
      *why = std::string(to_string(mode)) + " needs bf16 support (compute capability >= 8.0); " +
             device.str() + " has " + std::to_string(major) + "." + std::to_string(minor);
    }
    return false;
  }
  return true;
}

}  // namespace tokbench::train
