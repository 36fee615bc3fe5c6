// The RMSNorm kernels (rms_norm_kernels.hpp). Forward: one block per row, a block-wide fp32
// sum of squares, then the row written scaled. Backward: block p walks its own range of rows,
// each with one block-wide sum (Σ g·w·x) and one pass that writes grad_x and adds g·x·rstd to
// the block's own row of the grad_w partial (thread t owns columns t, t + blockDim, ...), so
// no two threads ever add to one float. Reductions run in a fixed order for a given width.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include "cuda/rms_norm_kernels.hpp"
#include "cuda/block_reduce.cuh"
#include "cuda/float_conversion.cuh"
#include "cuda/kernel_launch.cuh"

namespace tokbench::cuda {
namespace {

template <typename T>
__global__ void rms_norm_forward_kernel(const T* __restrict__ x, const float* __restrict__ scale, T* __restrict__ y,
                                        float* __restrict__ rstd, int64_t width, float eps) {
  __shared__ float shared[32];
  const int64_t row = blockIdx.x;
  const T* x_row = x + row * width;
  T* y_row = y + row * width;
  float squares = 0.0f;
  for (int64_t j = threadIdx.x; j < width; j += blockDim.x) {
    const float v = to_float(x_row[j]);
    squares += v * v;
  }
  const float r = rsqrtf(block_sum(squares, shared) / static_cast<float>(width) + eps);
  if (threadIdx.x == 0) rstd[row] = r;
  for (int64_t j = threadIdx.x; j < width; j += blockDim.x) y_row[j] = from_float<T>(to_float(x_row[j]) * r * scale[j]);
}

template <typename T>
__global__ void rms_norm_backward_kernel(const T* __restrict__ g, const T* __restrict__ x,
                                         const float* __restrict__ scale, const float* __restrict__ rstd,
                                         T* __restrict__ grad_x, float* __restrict__ partial, int64_t parts,
                                         int64_t rows, int64_t width) {
  __shared__ float shared[32];
  const int64_t part = blockIdx.x;
  const int64_t begin = rows * part / parts;
  const int64_t end = rows * (part + 1) / parts;
  float* const own = partial != nullptr ? partial + part * width : nullptr;
  if (own != nullptr)
    for (int64_t j = threadIdx.x; j < width; j += blockDim.x) own[j] = 0.0f;
  for (int64_t row = begin; row < end; ++row) {
    const T* g_row = g + row * width;
    const T* x_row = x + row * width;
    T* out = grad_x + row * width;
    const float r = rstd[row];
    float dot = 0.0f;
    for (int64_t j = threadIdx.x; j < width; j += blockDim.x) dot += to_float(g_row[j]) * scale[j] * to_float(x_row[j]);
    const float correction = r * r * (block_sum(dot, shared) / static_cast<float>(width));
    for (int64_t j = threadIdx.x; j < width; j += blockDim.x) {
      const float gj = to_float(g_row[j]);
      const float xj = to_float(x_row[j]);
      out[j] = from_float<T>(r * (gj * scale[j] - xj * correction));
      if (own != nullptr) own[j] += gj * xj * r;
    }
  }
}

}  // namespace

std::string rms_norm_forward(RowType type, const void* x, const float* scale, void* y, float* rstd, int64_t rows,
                             int64_t width, float eps, void* stream) {
  if (rows <= 0 || width <= 0) return {};
  if (rows > kMaxGrid) return "rms_norm_forward: more rows than one launch's grid holds";
  const auto s = static_cast<cudaStream_t>(stream);
  const dim3 grid(static_cast<unsigned>(rows));
  if (type == RowType::bf16)
    rms_norm_forward_kernel<<<grid, threads_for(width), 0, s>>>(static_cast<const __nv_bfloat16*>(x), scale,
                                                                 static_cast<__nv_bfloat16*>(y), rstd, width, eps);
  else
    rms_norm_forward_kernel<<<grid, threads_for(width), 0, s>>>(static_cast<const float*>(x), scale,
                                                                 static_cast<float*>(y), rstd, width, eps);
  return launch_result("rms_norm_forward");
}

std::string rms_norm_backward(RowType type, const void* g, const void* x, const float* scale, const float* rstd,
                              void* grad_x, float* grad_weight_partial, int64_t parts, int64_t rows, int64_t width,
                              void* stream) {
  if (rows <= 0 || width <= 0) return {};
  if (parts < 1 || parts > kMaxGrid) return "rms_norm_backward: parts must be 1..2^31-1";
  const auto s = static_cast<cudaStream_t>(stream);
  const dim3 grid(static_cast<unsigned>(parts));
  if (type == RowType::bf16)
    rms_norm_backward_kernel<<<grid, threads_for(width), 0, s>>>(
        static_cast<const __nv_bfloat16*>(g), static_cast<const __nv_bfloat16*>(x), scale, rstd,
        static_cast<__nv_bfloat16*>(grad_x), grad_weight_partial, parts, rows, width);
  else
    rms_norm_backward_kernel<<<grid, threads_for(width), 0, s>>>(static_cast<const float*>(g),
                                                                  static_cast<const float*>(x), scale, rstd,
                                                                  static_cast<float*>(grad_x), grad_weight_partial,
                                                                  parts, rows, width);
  return launch_result("rms_norm_backward");
}

}  // namespace tokbench::cuda
