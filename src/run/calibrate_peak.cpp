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

// A shape's operands, made once outside every timed call: a (m x k) and b (k x n) for at::mm,
// and w, b transposed (n x k) as nn.Linear stores it, for oneDNN's linear.
struct Operands {
  at::Tensor a, b, w;
};

Operands operands_of(const Shape& s, at::ScalarType dtype) {
  const auto options = at::TensorOptions().dtype(dtype);
  Operands o{at::randn({s.m, s.k}, options), at::randn({s.k, s.n}, options), {}};
  o.w = o.b.t().contiguous();
  return o;
}

struct Kernel {
  std::string name;
  std::function<void(const Operands&)> call;
};

// The kernels timed here: at::mm, and oneDNN's linear through the fused executor's kernel layer
// (train/gemm_kernels.hpp) where this LibTorch has it.
std::vector<Kernel> kernels_here(bool linear) {
  std::vector<Kernel> kernels = {{"at::mm", [](const Operands& o) { (void)at::mm(o.a, o.b); }}};
  if (linear)
    kernels.push_back({"mkldnn::_linear_pointwise (oneDNN)", [](const Operands& o) {
                         (void)train::linear_forward(train::GemmKernel::onednn, o.a, o.w, {});
                       }});
  return kernels;
}

// The probe's time per call: the best of a few after one that may set the kernel up, as one call
// of a fraction of a millisecond is at the mercy of a single stall on a shared machine.
constexpr int kProbeCalls = 5;
double probe_seconds(const Kernel& kernel, const Operands& o) {
  kernel.call(o);
  double best = 1e300;
  for (int i = 0; i < kProbeCalls; ++i) {
    const auto start = Clock::now();
    kernel.call(o);
    best = std::min(best, std::chrono::duration<double>(Clock::now() - start).count());
  }
  return best;
}

// One dtype's calibration: what each case logs, the kernels left out, and the best rate of a
// kernel timed on the full shapes (a rate only a probe or a single slow call gave is no
// achievable peak, since the run's own kernels may beat it: logged, not kept).
class DtypePeak {
 public:
  DtypePeak(std::string dtype, const std::function<void(const std::string&)>& log)
      : dtype_(std::move(dtype)), log_(log), best_{dtype_, 0, "", ""} {}

  bool left_out(const std::string& kernel) const { return left_out_.count(kernel) > 0; }

  // Runs `time` (seconds per call); where this CPU refuses the kernel (e.g. oneDNN's bf16 linear
  // without bf16 support) says so and leaves it out.
  std::optional<double> timed(const std::string& kernel, const Shape& s, const std::function<double()>& time) {
    try {
      return time();
    } catch (const std::exception& e) {
      const std::string why = e.what();
      log_(fmt::format("{} {:<34} {:>15}  not run on this CPU: {}", dtype_, kernel, name_of(s),
                       why.substr(0, why.find('\n'))));
      left_out_.insert(kernel);
      return std::nullopt;
    }
  }

  // A full shape's time: logged, and kept where it beats the best so far.
  void measured(const std::string& kernel, const Shape& s, double seconds) {
    const double rate = flops_of(s) / seconds;
    log_(fmt::format("{} {:<34} {:>15}  {:8.1f} GFLOP/s", dtype_, kernel, name_of(s), rate / 1e9));
    usable_ = true;
    if (rate > best_.flops_per_s) best_ = machine::MeasuredPeak{dtype_, rate, kernel, name_of(s)};
  }

  // A kernel too slow to time on the full shapes: its rate logged with why, the kernel left out.
  void too_slow(const std::string& kernel, const Shape& s, double seconds, const std::string& why) {
    log_(fmt::format("{} {:<34} {:>15}  {:8.1f} GFLOP/s ({})", dtype_, kernel, name_of(s), flops_of(s) / seconds / 1e9,
                     why));
    left_out_.insert(kernel);
  }

  std::optional<machine::MeasuredPeak> peak() const {
    if (usable_) return best_;
    log_(fmt::format("{}: no kernel runs it at a usable rate on this CPU: no peak kept (runs in {} keep the "
                     "clock-based estimate)",
                     dtype_, dtype_));
    return std::nullopt;
  }

 private:
  std::string dtype_;
  const std::function<void(const std::string&)>& log_;
  machine::MeasuredPeak best_;
  bool usable_ = false;
  std::set<std::string> left_out_;
};

}  // namespace

machine::CpuCalibration calibrate_cpu_peak(const CalibrationSettings& settings,
                                  const std::function<void(const std::string&)>& log) {
  machine::CpuCalibration result;
  result.key = machine::calibration_key_here(at::get_num_threads(), TORCH_VERSION);
  result.measured_at = machine::rfc3339_now();
  const bool linear = train::onednn_linear_available();
  if (!linear) log("mkldnn::_linear_pointwise is not in this LibTorch: at::mm only");
  const std::vector<Kernel> kernels = kernels_here(linear);
  at::NoGradGuard no_grad;
  for (const auto& [dtype_name, dtype] : {std::pair{"fp32", at::kFloat}, std::pair{"bf16", at::kBFloat16}}) {
    DtypePeak peak(dtype_name, log);
    const Operands probe = operands_of(kProbe, dtype);
    for (const Kernel& kernel : kernels) {
      const auto seconds = peak.timed(kernel.name, kProbe, [&] { return probe_seconds(kernel, probe); });
      if (!seconds) continue;
      const double projected = *seconds * flops_of(kShapes[0]) / flops_of(kProbe);
      if (projected >= kSlowCallSeconds)
        peak.too_slow(kernel.name, kProbe, *seconds,
                      fmt::format("a {} call would take about {:.0f} s: too slow to time on the full shapes",
                                  name_of(kShapes[0]), projected));
    }
    for (const Shape& s : kShapes) {
      const Operands o = operands_of(s, dtype);
      for (const Kernel& kernel : kernels) {
        if (peak.left_out(kernel.name)) continue;
        const auto seconds = peak.timed(kernel.name, s, [&] {
          return best_seconds([&] { kernel.call(o); }, settings.seconds_per_case);
        });
        if (!seconds) continue;
        if (*seconds >= kSlowCallSeconds)
          peak.too_slow(kernel.name, s, *seconds, "one call: too slow to time on the other shapes");
        else
          peak.measured(kernel.name, s, *seconds);
      }
    }
    if (const auto kept = peak.peak()) result.peaks.push_back(*kept);
  }
  return result;
}

}  // namespace tokbench::run
