// Parameter dtypes and the device capability check of a training precision (dtype_mode.hpp).
#include "train/dtype_mode.hpp"

#include "train/cuda_support.hpp"

namespace tokbench::train {

using model::TrainPrecision;

c10::ScalarType param_dtype(TrainPrecision precision) {
  return precision == TrainPrecision::bf16_true ? c10::kBFloat16 : c10::kFloat;
}

bool dtype_supported(TrainPrecision precision, const c10::Device& device, std::string* why) {
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
  if (precision != TrainPrecision::fp32 && major < 8) {
    if (why) {
      *why = std::string(to_string(precision)) + " needs bf16 support (compute capability >= 8.0); " +
             device.str() + " has " + std::to_string(major) + "." + std::to_string(minor);
    }
    return false;
  }
  return true;
}

}  // namespace tokbench::train
