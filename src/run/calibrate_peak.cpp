// The matmul calibration (calibrate_peak.hpp). Only ATen is included, not torch/torch.h.
#include "run/calibrate_peak.hpp"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <ATen/core/grad_mode.h>
#include <fmt/format.h>
#include <torch/version.h>

#include <chrono>
#include <functional>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

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
// at 0.3 GFLOP/s, 57 s a call of the first shape, on a 2-core AMD EPYC VM). Each kernel is first
// timed on kProbe; where that says a call of the first shape would take this long or more, the
// probe's rate stands and the kernel is not timed on the full shapes, so the calibration takes
// seconds whatever the CPU supports.
constexpr double kSlowCallSeconds = 5.0;
constexpr Shape kProbe{256, 256, 256};

double flops_of(const Shape& s) {
  return 2.0 * static_cast<double>(s.m) * static_cast<double>(s.n) * static_cast<double>(s.k);
}

std::string name_of(const Shape& s) { return fmt::format("{}x{}x{}", s.m, s.n, s.k); }

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
    // Whether a kernel was timed on the full shapes: a rate only a probe or a slow call gave is
    // no achievable peak (the run's own kernels may beat it), so it is logged and not kept.
    bool usable = false;
    // Kernels left out for this dtype: too slow to time on the full shapes, or refused by this CPU.
    std::set<std::string> left_out;
    using Kernel = std::function<void(const at::Tensor&, const at::Tensor&)>;
    std::vector<std::pair<std::string, Kernel>> kernels = {
        {"at::mm", [](const at::Tensor& a, const at::Tensor& b) { (void)at::mm(a, b); }}};
    if (linear)  // b transposed to (n x k), as nn.Linear stores it
      kernels.push_back({"mkldnn::_linear_pointwise (oneDNN)", [](const at::Tensor& a, const at::Tensor& b) {
                           (void)train::linear_forward(train::GemmKernel::onednn, a, b.t().contiguous(), {});
                         }});
    const auto inputs = [&](const Shape& s) {
      return std::pair{at::randn({s.m, s.k}, at::TensorOptions().dtype(dtype)),
                       at::randn({s.k, s.n}, at::TensorOptions().dtype(dtype))};
    };
    // The kernel's time for one call of `call`, or none where this CPU refuses it (e.g. oneDNN's
    // bf16 linear without bf16 support), said in the log and the kernel left out.
    const auto timed = [&](const std::string& kernel, const std::string& shape,
                           const std::function<double()>& time) -> std::optional<double> {
      try {
        return time();
      } catch (const std::exception& e) {
        const std::string why = e.what();
        log(fmt::format("{} {:<34} {:>15}  not run on this CPU: {}", dtype_name, kernel, shape,
                        why.substr(0, why.find('\n'))));
        left_out.insert(kernel);
        return std::nullopt;
      }
    };
    const auto consider = [&](const std::string& kernel, const Shape& s, double seconds, const std::string& note) {
      const double rate = flops_of(s) / seconds;
      log(fmt::format("{} {:<34} {:>15}  {:8.1f} GFLOP/s{}", dtype_name, kernel, name_of(s), rate / 1e9, note));
      if (!note.empty()) return;
      usable = true;
      if (rate > best.flops_per_s) best = machine::MeasuredPeak{dtype_name, rate, kernel, name_of(s)};
    };
    {
      const auto [a, b] = inputs(kProbe);
      for (const auto& [kernel, call] : kernels) {
        // The second of two calls: the first may set the kernel up.
        const auto seconds = timed(kernel, name_of(kProbe), [&] {
          call(a, b);
          const auto start = Clock::now();
          call(a, b);
          return std::chrono::duration<double>(Clock::now() - start).count();
        });
        if (!seconds) continue;
        const double projected = *seconds * flops_of(kShapes[0]) / flops_of(kProbe);
        if (projected < kSlowCallSeconds) continue;
        consider(kernel, kProbe, *seconds,
                 fmt::format(" (a {} call would take about {:.0f} s: too slow to time on the full shapes)",
                             name_of(kShapes[0]), projected));
        left_out.insert(kernel);
      }
    }
    for (const Shape& s : kShapes) {
      const auto [a, b] = inputs(s);
      for (const auto& [kernel, call] : kernels) {
        if (left_out.count(kernel)) continue;
        const auto seconds =
            timed(kernel, name_of(s), [&] { return best_seconds([&] { call(a, b); }, settings.seconds_per_case); });
        if (!seconds) continue;
        const bool slow = *seconds >= kSlowCallSeconds;
        consider(kernel, s, *seconds, slow ? " (one call: too slow to time on the other shapes)" : "");
        if (slow) left_out.insert(kernel);
      }
    }
    if (usable)
      result.peaks.push_back(best);
    else
      log(fmt::format("{}: no kernel runs it at a usable rate on this CPU: no peak kept (runs in {} keep the "
                      "clock-based estimate)",
                      dtype_name, dtype_name));
  }
  return result;
}

}  // namespace tokbench::run
