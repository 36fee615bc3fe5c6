// `tokbench env --calibrate`: measures the dense matmul FLOP/s this CPU reaches per dtype
// (fp32, bf16) at the current intra-op thread count, the best of the fastest kernels
// LibTorch offers here (at::mm, i.e. MKL for fp32, and oneDNN's linear through the
// dispatcher op mkldnn::_linear_pointwise) over a few square and LLM-like shapes. The
// result is the peak `tokbench run` uses for CPU MFU (calibration_cache.hpp): an achievable
// peak, so MFU stays at or below 100% where the clock-based estimate can be exceeded. A dtype
// that no kernel runs at a usable rate here (bf16 where the CPU lacks it) gets no peak: a rate
// that low is no upper bound, and its runs keep the estimate.
#pragma once

#include <functional>
#include <string>

#include "machine/calibration_cache.hpp"

namespace tokbench::run {

struct CalibrationSettings {
  // Each (dtype, kernel, shape) case is timed for at least this long after one warm-up call
  // (and at least twice); the whole calibration takes ~8x this plus the warm-ups.
  double seconds_per_case = 0.3;
};

// Measures at at::get_num_threads() threads; `log` receives one line per case.
machine::CpuCalibration calibrate_cpu_peak(const CalibrationSettings& settings,
                                  const std::function<void(const std::string&)>& log);

}  // namespace tokbench::run
