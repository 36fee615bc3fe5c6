// The LayerNorm kernels (layer_norm_kernels.hpp). Forward: one block per row, two block-wide
// fp32 sums (Σx for the mean, then Σ(x − mean)², two passes rather than one Σx² so a row far
// from zero keeps its variance's digits, as ATen's Welford sum does), then the row written.
// Backward: block p walks its own range of rows, each with two block-wide sums (Σ g·w and
// Σ g·w·x̂) and one pass that writes grad_x and adds g·x̂ and g to the block's own rows of the
// grad_w and grad_b partials (thread t owns columns t, t + blockDim, ...), so no two threads
// ever add to one float. Reductions run in a fixed order for a given width.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include "cuda/block_reduce.cuh"
#include "cuda/float_conversion.cuh"
#include "cuda/kernel_launch.cuh"
#include "cuda/layer_norm_kernels.hpp"

namespace tokbench::cuda {
namespace {

template <typename T>
__global__ void layer_norm_forward_kernel(const T* __restrict__ x, const float* __restrict__ weight,
                                          const float* __restrict__ bias, T* __restrict__ y,
                                          float* __restrict__ mean_of, float* __restrict__ rstd_of, int64_t width,
                                          float eps) {
  __shared__ float shared[32];
  const int64_t row = blockIdx.x;
  const T* x_row = x + row * width;
  T* y_row = y + row * width;
  const float n = static_cast<float>(width);
  float sum = 0.0f;
  for (int64_t j = threadIdx.x; j < width; j += blockDim.x) sum += to_float(x_row[j]);
  const float mean = block_sum(sum, shared) / n;
  float squares = 0.0f;
  for (int64_t j = threadIdx.x; j < width; j += blockDim.x) {
    const float d = to_float(x_row[j]) - mean;
    squares += d * d;
  }
  const float r = rsqrtf(block_sum(squares, shared) / n + eps);
  if (threadIdx.x == 0) {
    mean_of[row] = mean;
    rstd_of[row] = r;
  }
  for (int64_t j = threadIdx.x; j < width; j += blockDim.x)
    y_row[j] = from_float<T>((to_float(x_row[j]) - mean) * r * weight[j] + bias[j]);
}

template <typename T>
__global__ void layer_norm_backward_kernel(const T* __restrict__ g, const T* __restrict__ x,
                                           const float* __restrict__ weight, const float* __restrict__ mean_of,
                                           const float* __restrict__ rstd_of, T* __restrict__ grad_x,
                                           float* __restrict__ weight_partial, float* __restrict__ bias_partial,
                                           int64_t parts, int64_t rows, int64_t width) {
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
    T* out = grad_x + row * width;
    const float mean = mean_of[row];
    const float r = rstd_of[row];
    float sum_gw = 0.0f, sum_gw_xhat = 0.0f;
    for (int64_t j = threadIdx.x; j < width; j += blockDim.x) {
      const float gw = to_float(g_row[j]) * weight[j];
      sum_gw += gw;
      sum_gw_xhat += gw * (to_float(x_row[j]) - mean) * r;
    }
    const float mean_gw = block_sum(sum_gw, shared) / n;
    const float mean_gw_xhat = block_sum(sum_gw_xhat, shared) / n;
    for (int64_t j = threadIdx.x; j < width; j += blockDim.x) {
      const float gj = to_float(g_row[j]);
      const float xhat = (to_float(x_row[j]) - mean) * r;
      out[j] = from_float<T>(r * (gj * weight[j] - mean_gw - xhat * mean_gw_xhat));
      if (own_w != nullptr) own_w[j] += gj * xhat;
      if (own_b != nullptr) own_b[j] += gj;
    }
  }
}

}  // namespace

std::string layer_norm_forward(RowType type, const void* x, const float* weight, const float* bias, void* y,
                               float* mean, float* rstd, int64_t rows, int64_t width, float eps, void* stream) {
  if (rows <= 0 || width <= 0) return {};
  if (rows > kMaxGrid) return "layer_norm_forward: more rows than one launch's grid holds";
  const auto s = static_cast<cudaStream_t>(stream);
  const dim3 grid(static_cast<unsigned>(rows));
  if (type == RowType::bf16)
    layer_norm_forward_kernel<<<grid, threads_for(width), 0, s>>>(static_cast<const __nv_bfloat16*>(x), weight, bias,
                                                                   static_cast<__nv_bfloat16*>(y), mean, rstd, width,
                                                                   eps);
  else
    layer_norm_forward_kernel<<<grid, threads_for(width), 0, s>>>(static_cast<const float*>(x), weight, bias,
                                                                   static_cast<float*>(y), mean, rstd, width, eps);
  return launch_result("layer_norm_forward");
}

std::string layer_norm_backward(RowType type, const void* g, const void* x, const float* weight, const float* mean,
                                const float* rstd, void* grad_x, float* grad_weight_partial, float* grad_bias_partial,
                                int64_t parts, int64_t rows, int64_t width, void* stream) {
  if (rows <= 0 || width <= 0) return {};
  if (parts < 1 || parts > kMaxGrid) return "layer_norm_backward: parts must be 1..2^31-1";
  const auto s = static_cast<cudaStream_t>(stream);
  const dim3 grid(static_cast<unsigned>(parts));
  if (type == RowType::bf16)
    layer_norm_backward_kernel<<<grid, threads_for(width), 0, s>>>(
        static_cast<const __nv_bfloat16*>(g), static_cast<const __nv_bfloat16*>(x), weight, mean, rstd,
        static_cast<__nv_bfloat16*>(grad_x), grad_weight_partial, grad_bias_partial, parts, rows, width);
  else
    layer_norm_backward_kernel<<<grid, threads_for(width), 0, s>>>(
        static_cast<const float*>(g), static_cast<const float*>(x), weight, mean, rstd, static_cast<float*>(grad_x),
        grad_weight_partial, grad_bias_partial, parts, rows, width);
  return launch_result("layer_norm_backward");
}

}  // namespace tokbench::cuda
