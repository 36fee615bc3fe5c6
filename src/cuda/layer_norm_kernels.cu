// The LayerNorm kernels (layer_norm_kernels.hpp), with and without the residual add fused in
// front and with and without weight and bias (one kernel each way serves all: the branch, the
// sum's gradient, weight and bias are null pointers when absent; no weight reads as 1, no bias
// as 0). Forward: one block per row, two block-wide fp32 sums (Σx for the mean, then
// Σ(x − mean)², two passes rather than one Σx² so a row far from zero keeps its variance's
// digits, as ATen's Welford sum does), then the row written. Backward: block p walks its own
// range of rows, each with two block-wide sums (Σ g·w and Σ g·w·x̂) and one pass that writes
// grad_x and adds g·x̂ and g to the block's own rows of the grad_w and grad_b partials (thread t
// owns columns t, t + blockDim, ...), so no two threads ever add to one float. Reductions run
// in a fixed order for a given width.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include "cuda/block_reduce.cuh"
#include "cuda/float_conversion.cuh"
#include "cuda/kernel_launch.cuh"
#include "cuda/layer_norm_kernels.hpp"

namespace tokbench::cuda {
namespace {

// weight[j], or 1 without a weight; bias[j], or 0 without a bias.
__device__ __forceinline__ float weight_at(const float* weight, int64_t j) { return weight != nullptr ? weight[j] : 1.0f; }
__device__ __forceinline__ float bias_at(const float* bias, int64_t j) { return bias != nullptr ? bias[j] : 0.0f; }

// Without `branch` (null) `sum` is unused; with it, each column's rounded sum is written there
// (in the first pass) and normalised.
template <typename T>
__global__ void __launch_bounds__(kMaxRowThreads)
layer_norm_forward_kernel(const T* __restrict__ x, const T* __restrict__ branch,
                          const float* __restrict__ weight, const float* __restrict__ bias,
                          T* __restrict__ sum, T* __restrict__ y, float* __restrict__ mean_of,
                          float* __restrict__ rstd_of, int64_t width, float eps) {
  __shared__ float shared[32];
  const int64_t row = blockIdx.x;
  const T* x_row = x + row * width;
  const T* branch_row = branch != nullptr ? branch + row * width : nullptr;
  T* sum_row = branch != nullptr ? sum + row * width : nullptr;
  T* y_row = y + row * width;
  const float n = static_cast<float>(width);
  float total = 0.0f;
  for (int64_t j = threadIdx.x; j < width; j += blockDim.x) {
    const float v = norm_input(x_row, branch_row, j);
    if (sum_row != nullptr) sum_row[j] = from_float<T>(v);  // exact: v is already a T value
    total += v;
  }
  const float mean = block_sum(total, shared) / n;
  float squares = 0.0f;
  for (int64_t j = threadIdx.x; j < width; j += blockDim.x) {
    const float d = norm_input(x_row, branch_row, j) - mean;
    squares += d * d;
  }
  const float r = rsqrtf(block_sum(squares, shared) / n + eps);
  if (threadIdx.x == 0) {
    mean_of[row] = mean;
    rstd_of[row] = r;
  }
  for (int64_t j = threadIdx.x; j < width; j += blockDim.x)
    y_row[j] = from_float<T>((norm_input(x_row, branch_row, j) - mean) * r * weight_at(weight, j) + bias_at(bias, j));
}

// With `residual` (the gradient reaching the fused add's sum from the residual path), it is
// added to grad_x in fp32 before the one rounding; null: nothing added.
template <typename T>
__global__ void __launch_bounds__(kMaxRowThreads)
layer_norm_backward_kernel(const T* __restrict__ g, const T* __restrict__ x,
                           const T* __restrict__ residual, const float* __restrict__ weight,
                           const float* __restrict__ mean_of, const float* __restrict__ rstd_of,
                           T* __restrict__ grad_x, float* __restrict__ weight_partial,
                           float* __restrict__ bias_partial, int64_t parts, int64_t rows,
                           int64_t width) {
  __shared__ float shared[32];
  const int64_t part = blockIdx.x;
  const int64_t begin = rows * part / parts;
  const int64_t end = rows * (part + 1) / parts;
  float* const own_w = weight_partial != nullptr ? weight_partial + part * width : nullptr;
  float* const own_b = bias_partial != nullptr ? bias_partial + part * width : nullptr;
  for (int64_t j = threadIdx.x; j < width; j += blockDim.x) {
    if (own_w != nullptr) own_w[j] = 0.0f;
    if (own_b != nullptr) own_b[j] = 0.0f;
  }
  const float n = static_cast<float>(width);
  for (int64_t row = begin; row < end; ++row) {
    const T* g_row = g + row * width;
    const T* x_row = x + row * width;
    const T* residual_row = residual != nullptr ? residual + row * width : nullptr;
    T* out = grad_x + row * width;
    const float mean = mean_of[row];
    const float r = rstd_of[row];
    float sum_gw = 0.0f, sum_gw_xhat = 0.0f;
    for (int64_t j = threadIdx.x; j < width; j += blockDim.x) {
      const float gw = to_float(g_row[j]) * weight_at(weight, j);
      sum_gw += gw;
      sum_gw_xhat += gw * (to_float(x_row[j]) - mean) * r;
    }
    const float mean_gw = block_sum(sum_gw, shared) / n;
    const float mean_gw_xhat = block_sum(sum_gw_xhat, shared) / n;
    for (int64_t j = threadIdx.x; j < width; j += blockDim.x) {
      const float gj = to_float(g_row[j]);
      const float xhat = (to_float(x_row[j]) - mean) * r;
      const float extra = residual_row != nullptr ? to_float(residual_row[j]) : 0.0f;
      out[j] = from_float<T>(r * (gj * weight_at(weight, j) - mean_gw - xhat * mean_gw_xhat) + extra);
      if (own_w != nullptr) own_w[j] += gj * xhat;
      if (own_b != nullptr) own_b[j] += gj;
    }
  }
}

template <typename T>
void launch_forward(const void* x, const void* branch, const float* weight, const float* bias, void* sum, void* y,
                    float* mean, float* rstd, int64_t rows, int64_t width, float eps, cudaStream_t s) {
  launch(layer_norm_forward_kernel<T>, dim3(static_cast<unsigned>(rows)), threads_for(width), s,
         static_cast<const T*>(x), static_cast<const T*>(branch), weight, bias, static_cast<T*>(sum),
         static_cast<T*>(y), mean, rstd, width, eps);
}

template <typename T>
void launch_backward(const void* g, const void* x, const void* residual, const float* weight, const float* mean,
                     const float* rstd, void* grad_x, float* weight_partial, float* bias_partial, int64_t parts,
                     int64_t rows, int64_t width, cudaStream_t s) {
  launch(layer_norm_backward_kernel<T>, dim3(static_cast<unsigned>(parts)), threads_for(width), s,
         static_cast<const T*>(g), static_cast<const T*>(x), static_cast<const T*>(residual), weight, mean, rstd,
         static_cast<T*>(grad_x), weight_partial, bias_partial, parts, rows, width);
}

std::string forward_of(const char* what, RowType type, const void* x, const void* branch, const float* weight,
                       const float* bias, void* sum, void* y, float* mean, float* rstd, int64_t rows, int64_t width,
                       float eps, void* stream) {
  if (rows <= 0 || width <= 0) return {};
  if (rows > kMaxGrid) return std::string(what) + ": more rows than one launch's grid holds";
  const auto s = static_cast<cudaStream_t>(stream);
  if (type == RowType::bf16)
    launch_forward<__nv_bfloat16>(x, branch, weight, bias, sum, y, mean, rstd, rows, width, eps, s);
  else
    launch_forward<float>(x, branch, weight, bias, sum, y, mean, rstd, rows, width, eps, s);
  return launch_result(what);
}

std::string backward_of(const char* what, RowType type, const void* g, const void* x, const void* residual,
                        const float* weight, const float* mean, const float* rstd, void* grad_x,
                        float* weight_partial, float* bias_partial, int64_t parts, int64_t rows, int64_t width,
                        void* stream) {
  if (rows <= 0 || width <= 0) return {};
  if (parts < 1 || parts > kMaxGrid) return std::string(what) + ": parts must be 1..2^31-1";
  const auto s = static_cast<cudaStream_t>(stream);
  if (type == RowType::bf16)
    launch_backward<__nv_bfloat16>(g, x, residual, weight, mean, rstd, grad_x, weight_partial, bias_partial, parts,
                                   rows, width, s);
  else
    launch_backward<float>(g, x, residual, weight, mean, rstd, grad_x, weight_partial, bias_partial, parts, rows,
                           width, s);
  return launch_result(what);
}

}  // namespace

std::string layer_norm_forward(RowType type, const void* x, const float* weight, const float* bias, void* y,
                               float* mean, float* rstd, int64_t rows, int64_t width, float eps, void* stream) {
  return forward_of("layer_norm_forward", type, x, nullptr, weight, bias, nullptr, y, mean, rstd, rows, width, eps,
                    stream);
}

std::string layer_norm_backward(RowType type, const void* g, const void* x, const float* weight, const float* mean,
                                const float* rstd, void* grad_x, float* grad_weight_partial, float* grad_bias_partial,
                                int64_t parts, int64_t rows, int64_t width, void* stream) {
  return backward_of("layer_norm_backward", type, g, x, nullptr, weight, mean, rstd, grad_x, grad_weight_partial,
                     grad_bias_partial, parts, rows, width, stream);
}

std::string add_layer_norm_forward(RowType type, const void* branch, const void* x, const float* weight,
                                   const float* bias, void* sum, void* y, float* mean, float* rstd, int64_t rows,
                                   int64_t width, float eps, void* stream) {
  return forward_of("add_layer_norm_forward", type, x, branch, weight, bias, sum, y, mean, rstd, rows, width, eps,
                    stream);
}

std::string add_layer_norm_backward(RowType type, const void* g, const void* grad_sum, const void* sum,
                                    const float* weight, const float* mean, const float* rstd, void* grad_input,
                                    float* grad_weight_partial, float* grad_bias_partial, int64_t parts, int64_t rows,
                                    int64_t width, void* stream) {
  return backward_of("add_layer_norm_backward", type, g, sum, grad_sum, weight, mean, rstd, grad_input,
                     grad_weight_partial, grad_bias_partial, parts, rows, width, stream);
}

}  // namespace tokbench::cuda
