// Linear-layer GEMMs through ATen or oneDNN, and the start-up measurement that picks one per
// (role, shape class) on this machine (gemm_kernels.hpp).
#include "train/gemm_kernels.hpp"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Parallel.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <torch/version.h>

#include <algorithm>
#include <bit>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <limits>
#include <system_error>
#include <unistd.h>

#include "machine/cache_dir.hpp"

namespace tokbench::train {
namespace {

// Calibration runs at most this many rows and this many outputs/inputs per GEMM: a full
// lm_head GEMM (V = 128k) would make start-up take minutes. Rows are not cut below the
// benchmark's B·T = 2048: at 512 rows oneDNN won classes where it lost at the real 2048
// (pythia-160m, 2026-11-30).
constexpr int64_t kCalibrationMaxRows = 2048;
constexpr int64_t kCalibrationMaxDim = 16384;
constexpr int64_t kClassMaxRows = 4096;
constexpr double kOnednnMargin = 0.9;  // oneDNN is chosen only when at least 10% faster

using LinearPointwise = at::Tensor(const at::Tensor&, const at::Tensor&, const std::optional<at::Tensor>&,
                                   c10::string_view, c10::List<std::optional<at::Scalar>>,
                                   std::optional<c10::string_view>);

// The op is looked up once; nullopt when this LibTorch was built without oneDNN.
const std::optional<c10::TypedOperatorHandle<LinearPointwise>>& linear_pointwise_op() {
  static const std::optional<c10::TypedOperatorHandle<LinearPointwise>> op =
      []() -> std::optional<c10::TypedOperatorHandle<LinearPointwise>> {
    auto handle = c10::Dispatcher::singleton().findSchema({"mkldnn::_linear_pointwise", ""});
    if (!handle) return std::nullopt;
    return handle->typed<LinearPointwise>();
  }();
  return op;
}

// oneDNN's linear computes input·weightᵀ (+ bias); every role is that product with the
// operands arranged: grad-input dy·W = dy·(Wᵀ)ᵀ, grad-weight dyᵀ·x = dyᵀ·(xᵀ)ᵀ.
at::Tensor onednn_product(const at::Tensor& input, const at::Tensor& weight, const at::Tensor& bias) {
  const auto& op = linear_pointwise_op();
  TORCH_CHECK(op.has_value(), "oneDNN linear (mkldnn::_linear_pointwise) is not available in this LibTorch");
  return op->call(input.contiguous(), weight.contiguous(),
                  bias.defined() ? std::optional<at::Tensor>(bias) : std::nullopt, "none",
                  c10::List<std::optional<at::Scalar>>(), std::nullopt);
}

// An empty GEMM (an MoE expert that got no tokens) or a non-CPU tensor always takes ATen.
bool onednn_can_run(const at::Tensor& a, const at::Tensor& b) {
  return a.device().is_cpu() && a.numel() > 0 && b.numel() > 0;
}

int64_t pow2_class(int64_t n, int64_t cap) {
  if (n <= 1) return 1;
  return std::min<int64_t>(cap, int64_t{1} << (64 - std::countl_zero(static_cast<uint64_t>(n - 1))));
}

std::string cpu_model_name() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) {
      const auto colon = line.find(':');
      if (colon != std::string::npos) {
        auto name = line.substr(colon + 1);
        name.erase(0, name.find_first_not_of(' '));
        return name;
      }
    }
  }
  return "unknown-cpu";
}

// Relative Frobenius-norm error a kernel may have against ATen: fp32 sums of K products
// differ by blocking order at ~sqrt(K)·eps; 1e-4 leaves margin for K = 16k and no more.
double tolerance(at::ScalarType dtype) { return dtype == at::kFloat || dtype == at::kDouble ? 1e-4 : 2e-2; }

nlohmann::json read_cache(const std::filesystem::path& file) {
  std::ifstream in(file);
  if (!in) return nlohmann::json::object();
  auto doc = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  return doc.is_object() ? doc : nlohmann::json::object();  // a corrupt cache is re-measured
}

// Written to a temporary file and renamed, so a concurrent run never reads half a file.
void write_cache(const std::filesystem::path& file, const nlohmann::json& doc) {
  std::error_code ec;
  std::filesystem::create_directories(file.parent_path(), ec);
  const auto tmp = file.string() + ".tmp" + std::to_string(::getpid());
  {
    std::ofstream out(tmp);
    if (!out) return;  // an unwritable cache only costs the next run a measurement
    out << doc.dump(2) << "\n";
  }
  std::filesystem::rename(tmp, file, ec);
}

}  // namespace

at::Tensor run_gemm_role(GemmKernel kernel, GemmRole role, const at::Tensor& x, const at::Tensor& w,
                    const at::Tensor& dy) {
  switch (role) {
    case GemmRole::forward: return linear_forward(kernel, x, w, {});
    case GemmRole::grad_input: return linear_grad_input(kernel, dy, w);
    case GemmRole::grad_weight: return linear_grad_weight(kernel, dy, x);
  }
  TORCH_INTERNAL_ASSERT(false, "unreachable");
}

// Fastest of `repetitions` calls after one warm-up (the minimum is the least disturbed by
// other processes on a shared machine).
double fastest_seconds(const std::function<at::Tensor()>& call, int repetitions) {
  call();
  double best = std::numeric_limits<double>::infinity();
  for (int i = 0; i < repetitions; ++i) {
    const auto start = std::chrono::steady_clock::now();
    call();
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  return best;
}

const char* to_string(GemmKernel kernel) { return kernel == GemmKernel::aten ? "aten" : "onednn"; }

const char* to_string(GemmRole role) {
  switch (role) {
    case GemmRole::forward: return "forward";
    case GemmRole::grad_input: return "grad_input";
    case GemmRole::grad_weight: return "grad_weight";
  }
  return "?";
}

bool onednn_linear_available() { return linear_pointwise_op().has_value(); }

at::Tensor linear_forward(GemmKernel kernel, const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias) {
  if (kernel == GemmKernel::onednn && onednn_can_run(x, weight)) return onednn_product(x, weight, bias);
  return at::linear(x, weight, bias.defined() ? std::optional<at::Tensor>(bias) : std::nullopt);
}

at::Tensor linear_grad_input(GemmKernel kernel, const at::Tensor& dy, const at::Tensor& weight) {
  if (kernel == GemmKernel::onednn && onednn_can_run(dy, weight)) return onednn_product(dy, weight.t(), {});
  return at::mm(dy, weight);
}

at::Tensor linear_grad_weight(GemmKernel kernel, const at::Tensor& dy, const at::Tensor& x) {
  if (kernel == GemmKernel::onednn && onednn_can_run(dy, x)) return onednn_product(dy.t(), x.t(), {});
  return at::mm(dy.t(), x);
}

std::string GemmChoices::class_key(GemmRole role, const GemmShape& shape) {
  return fmt::format("{}:{}x{}x{}", to_string(role), pow2_class(shape.rows, kClassMaxRows),
                     pow2_class(shape.in, kCalibrationMaxDim), pow2_class(shape.out, kCalibrationMaxDim));
}

GemmKernel GemmChoices::choose(GemmRole role, const GemmShape& shape) const {
  if (everywhere) return *everywhere;
  const auto found = by_class.find(class_key(role, shape));
  return found == by_class.end() ? GemmKernel::aten : found->second;
}

std::string GemmChoices::summary() const {
  if (everywhere) return fmt::format("{} everywhere (fixed, not measured)", to_string(*everywhere));
  if (by_class.empty()) return "";
  int64_t onednn = 0;
  for (const auto& [key, kernel] : by_class) onednn += kernel == GemmKernel::onednn;
  return fmt::format("onednn for {} of {} (role, shape) classes, aten for {} [{}]", onednn, by_class.size(),
                     static_cast<int64_t>(by_class.size()) - onednn, from_cache ? "cached" : "measured");
}

std::filesystem::path default_gemm_cache_file() { return machine::tokbench_cache_dir() / "gemm-choice.json"; }

std::string gemm_machine_key(at::ScalarType dtype) {
  return fmt::format("{}|threads={}|torch={}|{}", cpu_model_name(), at::get_num_threads(), TORCH_VERSION,
                     c10::toString(dtype));
}

GemmChoices calibrate_gemm_choices(const std::vector<GemmShape>& shapes, at::ScalarType dtype,
                                   const c10::Device& device, const GemmCalibrationOptions& options) {
  GemmChoices choices;
  if (!device.is_cpu() || !onednn_linear_available()) return choices;  // ATen everywhere
  const auto file = options.cache_file.value_or(default_gemm_cache_file());
  const std::string machine = gemm_machine_key(dtype);
  nlohmann::json doc = options.use_cache ? read_cache(file) : nlohmann::json::object();
  nlohmann::json& entry = doc[machine];
  if (!entry.is_object()) entry = nlohmann::json::object();

  bool measured_any = false;
  const auto generator = at::make_generator<at::CPUGeneratorImpl>(20261130);
  for (const auto& shape : shapes) {
    for (GemmRole role : {GemmRole::forward, GemmRole::grad_input, GemmRole::grad_weight}) {
      const std::string key = GemmChoices::class_key(role, shape);
      if (choices.by_class.count(key)) continue;
      if (options.use_cache && entry.contains(key) && entry[key].is_string()) {
        choices.by_class[key] = entry[key].get<std::string>() == "onednn" ? GemmKernel::onednn : GemmKernel::aten;
        continue;
      }
      const int64_t M = std::min(shape.rows, kCalibrationMaxRows);
      const int64_t K = std::min(shape.in, kCalibrationMaxDim), N = std::min(shape.out, kCalibrationMaxDim);
      const auto opts = at::TensorOptions().dtype(dtype).device(device);
      auto x = at::randn({M, K}, generator, opts.dtype(at::kFloat)).to(dtype);
      auto w = (at::randn({N, K}, generator, opts.dtype(at::kFloat)) * 0.02).to(dtype);
      auto dy = at::randn({M, N}, generator, opts.dtype(at::kFloat)).to(dtype);
      GemmKernel chosen = GemmKernel::aten;
      try {
        // Correctness first: a kernel that disagrees with ATen is never chosen, however fast.
        const auto want = run_gemm_role(GemmKernel::aten, role, x, w, dy).to(at::kFloat);
        const auto got = run_gemm_role(GemmKernel::onednn, role, x, w, dy).to(at::kFloat);
        const double error = ((got - want).norm() / want.norm().clamp_min(1e-30)).item<double>();
        if (error <= tolerance(dtype)) {
          const double aten_s =
              fastest_seconds([&] { return run_gemm_role(GemmKernel::aten, role, x, w, dy); }, options.repetitions);
          const double onednn_s =
              fastest_seconds([&] { return run_gemm_role(GemmKernel::onednn, role, x, w, dy); }, options.repetitions);
          // oneDNN must win clearly: its grad GEMMs pay transposed copies the timing of one
          // GEMM in isolation underrates, and a near-tie flips with the load of a shared machine.
          if (onednn_s < kOnednnMargin * aten_s) chosen = GemmKernel::onednn;
        }
      } catch (const c10::Error&) {
        chosen = GemmKernel::aten;  // oneDNN refused this dtype or shape
      }
      choices.by_class[key] = chosen;
      entry[key] = to_string(chosen);
      measured_any = true;
    }
  }
  choices.from_cache = !measured_any;
  if (measured_any) write_cache(file, doc);
  return choices;
}

}  // namespace tokbench::train
