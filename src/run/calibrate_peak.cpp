// The matmul calibration (calibrate_peak.hpp). Only ATen is included, not torch/torch.h.
#include "run/calibrate_peak.hpp"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <ATen/core/grad_mode.h>
#include <fmt/format.h>
#include <torch/version.h>

#include <chrono>
#include <functional>
#include <set>
#include <stdexcept>
#include <string>

#include "machine/environment.hpp"
#include "train/gemm_kernels.hpp"

namespace tokbench::run {
namespace {

struct Shape {
  int64_t m, n, k;  // (m x k) @ (k x n)
};

// Square, then a Llama-style MLP projection of 2048 tokens (d_model 2048 -> 5632 and back):
// the shapes that dominate an LLM step, large enough for the kernels to reach their rate.
constexpr Shape kShapes[] = {{2048, 2048, 2048}, {2048, 5632, 2048}, {2048, 2048, 5632}};

using Clock = std::chrono::steady_clock;

// A call slower than this is a kernel without this CPU's support for its dtype (bf16 at::mm ran
// at 0.3 GFLOP/s, 57 s a call, on a 2-core AMD EPYC VM): its first call's rate stands, and the
// kernel is not timed again on the other shapes.
constexpr double kSlowCallSeconds = 5.0;

// The best per-call time of `call` after one warm-up call, repeated until `budget` seconds
// have passed (at least twice); the warm-up's own time where it took kSlowCallSeconds or more.
double best_seconds(const std::function<void()>& call, double budget) {
  const auto first = Clock::now();
  call();
  const double warm_up = std::chrono::duration<double>(Clock::now() - first).count();
  if (warm_up >= kSlowCallSeconds) return warm_up;
  double best = 1e300, spent = 0;
  for (int i = 0; i < 2 || spent < budget; ++i) {
    const auto start = Clock::now();
    call();
    const double s = std::chrono::duration<double>(Clock::now() - start).count();
    best = std::min(best, s);
    spent += s;
  }
  return best;
}

}  // namespace

machine::CpuCalibration calibrate_cpu_peak(const CalibrationSettings& settings,
                                  const std::function<void(const std::string&)>& log) {
  machine::CpuCalibration result;
  result.key = machine::calibration_key_here(at::get_num_threads(), TORCH_VERSION);
  result.measured_at = machine::rfc3339_now();
  // oneDNN's linear through the fused executor's kernel layer (train/gemm_kernels.hpp).
  const bool linear = train::onednn_linear_available();
  if (!linear) log("mkldnn::_linear_pointwise is not in this LibTorch: at::mm only");
  at::NoGradGuard no_grad;
  for (const auto& [dtype_name, dtype] : {std::pair{"fp32", at::kFloat}, std::pair{"bf16", at::kBFloat16}}) {
    machine::MeasuredPeak best{dtype_name, 0, "", ""};
    // Kernels left out for this dtype: too slow to time on every shape, or refused by this CPU.
    std::set<std::string> left_out;
    for (const Shape& s : kShapes) {
      const double flops = 2.0 * static_cast<double>(s.m) * static_cast<double>(s.n) * static_cast<double>(s.k);
      const std::string shape = fmt::format("{}x{}x{}", s.m, s.n, s.k);
      const at::Tensor a = at::randn({s.m, s.k}, at::TensorOptions().dtype(dtype));
      const at::Tensor b = at::randn({s.k, s.n}, at::TensorOptions().dtype(dtype));
      auto consider = [&](const std::string& kernel, const std::function<void()>& call) {
        if (left_out.count(kernel)) return;
        double seconds = 0;
        try {
          seconds = best_seconds(call, settings.seconds_per_case);
        } catch (const std::exception& e) {  // e.g. oneDNN's bf16 linear where the CPU has no bf16 support
          const std::string why = e.what();
          log(fmt::format("{} {:<34} {:>15}  not run on this CPU: {}", dtype_name, kernel, shape,
                          why.substr(0, why.find('\n'))));
          left_out.insert(kernel);
          return;
        }
        const double rate = flops / seconds;
        log(fmt::format("{} {:<34} {:>15}  {:8.1f} GFLOP/s{}", dtype_name, kernel, shape, rate / 1e9,
                        seconds >= kSlowCallSeconds ? " (one call: too slow to time on the other shapes)" : ""));
        if (seconds >= kSlowCallSeconds) left_out.insert(kernel);
        if (rate > best.flops_per_s) best = machine::MeasuredPeak{dtype_name, rate, kernel, shape};
      };
      consider("at::mm", [&] { (void)at::mm(a, b); });
      if (linear) {
        const at::Tensor w = b.t().contiguous();  // (n x k), as nn.Linear stores it
        consider("mkldnn::_linear_pointwise (oneDNN)",
                 [&] { (void)train::linear_forward(train::GemmKernel::onednn, a, w, {}); });
      }
    }
    result.peaks.push_back(best);
  }
  return result;
}

}  // namespace tokbench::run
