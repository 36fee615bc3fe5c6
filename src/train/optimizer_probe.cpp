// The AdamW cost probe (optimizer_probe.hpp).
#include "train/optimizer_probe.hpp"

#include <ATen/Parallel.h>
#include <ATen/core/Tensor.h>
#include <ATen/ops/randn.h>
#include <ATen/ops/zeros.h>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <vector>

#include "train/adamw_keys.hpp"
#include "train/optimizer.hpp"

namespace tokbench::train {
namespace {

constexpr int64_t kSmallTensors = 256, kSmallElements = 256;  // many tensors, few elements
constexpr int64_t kLargeElements = 4 << 20;                    // one tensor, many elements
constexpr int kRepeats = 7;

// Median seconds of one step over `count` tensors of `elements` each, gradients set.
double step_seconds(int64_t count, int64_t elements) {
  std::vector<at::Tensor> params;
  for (int64_t i = 0; i < count; ++i) {
    params.push_back(at::randn({elements}).set_requires_grad(true));
    params.back().mutable_grad() = at::randn({elements});
  }
  AdamWOptions options;
  AdamW adamw(params, options, c10::Device(c10::kCPU));
  adamw.step();  // the state is created on the first step
  std::vector<double> times;
  for (int i = 0; i < kRepeats; ++i) {
    const auto start = std::chrono::steady_clock::now();
    adamw.step();
    times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

}  // namespace

OptimizerCost measure_optimizer_cost(int64_t threads) {
  const int before = at::get_num_threads();
  at::set_num_threads(static_cast<int>(std::max<int64_t>(1, threads)));
  const double small = step_seconds(kSmallTensors, kSmallElements);
  const double large = step_seconds(1, kLargeElements);
  at::set_num_threads(before);
  // small = n·a + n·e·b, large = a + E·b: solved for a (per tensor) and b (per element).
  const double n = kSmallTensors, e = kSmallElements, E = kLargeElements;
  const double b = (large - small / n) / (E - e);
  const double a = small / n - e * b;
  OptimizerCost cost;
  cost.per_element_seconds = std::max(0.0, b);
  cost.per_tensor_seconds = std::max(0.0, a);
  cost.threads = std::max<int64_t>(1, threads);
  cost.method = fmt::format(
      "tokbench's AdamW ({}), median of {} steps on {} tensors of {} elements and on one of {} elements, {} "
      "thread(s): per tensor and per element solved from the pair",
      AdamW({at::zeros({1}).set_requires_grad(true)}, AdamWOptions{}, c10::Device(c10::kCPU)).fused()
          ? adamw_key::fused
          : adamw_key::per_parameter,
      kRepeats, kSmallTensors, kSmallElements, kLargeElements, cost.threads);
  return cost;
}

}  // namespace tokbench::train
