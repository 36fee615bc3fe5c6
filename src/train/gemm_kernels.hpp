// The three GEMMs of a linear layer (forward x·Wᵀ+b, grad-input dy·W, grad-weight dyᵀ·x),
// each computable by two kernels: ATen's (at::linear / at::mm; MKL on the CPU) or oneDNN's
// (mkldnn::_linear_pointwise with its operands arranged so it computes the needed product).
// Which one is faster depends on the machine, the dtype and the shape, so the choice is
// MEASURED once per (dtype, shape class) on the model's own shapes and cached per machine in
// a small JSON file; a kernel whose result disagrees with at::linear is never chosen.
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <functional>
#include <string>
#include <vector>

namespace tokbench::train {

enum class GemmKernel { aten, onednn };
enum class GemmRole { forward, grad_input, grad_weight };

const char* to_string(GemmKernel kernel);
const char* to_string(GemmRole role);

// True when this LibTorch has the oneDNN linear op (mkldnn::_linear_pointwise).
bool onednn_linear_available();

// x: (M, K), weight: (N, K), bias: (N) or undefined -> (M, N)
at::Tensor linear_forward(GemmKernel kernel, const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias);
// dy: (M, N), weight: (N, K) -> (M, K)
at::Tensor linear_grad_input(GemmKernel kernel, const at::Tensor& dy, const at::Tensor& weight);
// dy: (M, N), x: (M, K) -> (N, K)
at::Tensor linear_grad_weight(GemmKernel kernel, const at::Tensor& dy, const at::Tensor& x);

// The GEMM of `role` on `kernel`: forward x·Wᵀ, grad-input dy·W, grad-weight dyᵀ·x.
at::Tensor run_gemm_role(GemmKernel kernel, GemmRole role, const at::Tensor& x, const at::Tensor& w,
                         const at::Tensor& dy);
// Fastest of `repetitions` calls after one warm-up: what the kernel choice and its benchmark time.
double fastest_seconds(const std::function<at::Tensor()>& call, int repetitions);

// One linear layer's GEMM shape: M rows (batch·time), K inputs, N outputs.
struct GemmShape {
  int64_t rows = 0, in = 0, out = 0;
};

// The kernel per (role, shape class) for one dtype on one machine. A shape class rounds each
// dimension up to a power of two (capped), so nearby shapes share one measurement.
class GemmChoices {
 public:
  // Unmeasured roles and classes, and every non-CPU device, use ATen.
  GemmKernel choose(GemmRole role, const GemmShape& shape) const;
  // "onednn for 7 of 9 (role, shape) classes, aten for 2 [measured|cached]"; "" when empty.
  std::string summary() const;

  static std::string class_key(GemmRole role, const GemmShape& shape);
  std::map<std::string, GemmKernel> by_class;
  bool from_cache = false;
  std::optional<GemmKernel> everywhere;  // set: this kernel for every role and class, unmeasured
};

struct GemmCalibrationOptions {
  std::optional<std::filesystem::path> cache_file;  // nullopt: default_gemm_cache_file()
  bool use_cache = true;                            // false: always measure (and rewrite the cache)
  int repetitions = 2;                              // timed calls per kernel, after one warm-up
};

// gemm-choice.json in machine::tokbench_cache_dir() (machine/cache_dir.hpp: $TOKBENCH_CACHE_DIR, $XDG_CACHE_HOME/tokbench, ~/.cache/tokbench).
std::filesystem::path default_gemm_cache_file();

// The cache entry's key: CPU model name, LibTorch thread count, torch version and dtype.
std::string gemm_machine_key(at::ScalarType dtype);

// Measures ATen and oneDNN on each shape (rows capped so calibration stays a few seconds)
// for each role, on `device` in `dtype`, and keeps the faster kernel that agrees with
// at::linear. Reuses and updates the cache file. On a non-CPU device, or without oneDNN,
// returns all-ATen choices without measuring.
GemmChoices calibrate_gemm_choices(const std::vector<GemmShape>& shapes, at::ScalarType dtype,
                                   const c10::Device& device, const GemmCalibrationOptions& options = {});

}  // namespace tokbench::train
