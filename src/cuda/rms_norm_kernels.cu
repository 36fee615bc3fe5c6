// The RMSNorm kernels (rms_norm_kernels.hpp), with and without the residual add fused in front
// (one kernel each way serves both: the branch and the sum's gradient are null pointers when
// absent). Forward: one block per row, a block-wide fp32 sum of squares, then the row written
// scaled. Backward: block p walks its own range of rows, each with one block-wide sum
// (Σ g·w·x) and one pass that writes grad_x and adds g·x·rstd to the block's own row of the
// grad_w partial (thread t owns columns t, t + blockDim, ...), so no two threads ever add to
// one float. Reductions run in a fixed order for a given width.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include "cuda/rms_norm_kernels.hpp"
#include "cuda/block_reduce.cuh"
#include "cuda/float_conversion.cuh"
#include "cuda/kernel_launch.cuh"

namespace tokbench::cuda {
namespace {

// Without `branch` (null) `sum` is unused; with it, each column's rounded sum is written there.
template <typename T>
__global__ void __launch_bounds__(kMaxRowThreads)
rms_norm_forward_kernel(const T* __restrict__ x, const T* __restrict__ branch,
                        const float* __restrict__ scale, T* __restrict__ sum,
                        T* __restrict__ y, float* __restrict__ rstd, int64_t width, float eps) {
  __shared__ float shared[32];
  const int64_t row = blockIdx.x;
  const T* x_row = x + row * width;
  const T* branch_row = branch != nullptr ? branch + row * width : nullptr;
  T* sum_row = branch != nullptr ? sum + row * width : nullptr;
  T* y_row = y + row * width;
  float squares = 0.0f;
  for (int64_t j = threadIdx.x; j < width; j += blockDim.x) {
    const float v = norm_input(x_row, branch_row, j);
    if (sum_row != nullptr) sum_row[j] = from_float<T>(v);  // exact: v is already a T value
    squares += v * v;
  }
  const float r = rsqrtf(block_sum(squares, shared) / static_cast<float>(width) + eps);
  if (threadIdx.x == 0) rstd[row] = r;
  for (int64_t j = threadIdx.x; j < width; j += blockDim.x)
    y_row[j] = from_float<T>(norm_input(x_row, branch_row, j) * r * scale[j]);
}

// With `residual` (the gradient reaching the fused add's sum from the residual path), it is
// added to grad_x in fp32 before the one rounding; null: nothing added.
template <typename T>
__global__ void __launch_bounds__(kMaxRowThreads)
rms_norm_backward_kernel(const T* __restrict__ g, const T* __restrict__ x,
                         const T* __restrict__ residual, const float* __restrict__ scale,
                         const float* __restrict__ rstd, T* __restrict__ grad_x,
                         float* __restrict__ partial, int64_t parts, int64_t rows, int64_t width) {
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
    const T* residual_row = residual != nullptr ? residual + row * width : nullptr;
    T* out = grad_x + row * width;
    const float r = rstd[row];
    float dot = 0.0f;
    for (int64_t j = threadIdx.x; j < width; j += blockDim.x) dot += to_float(g_row[j]) * scale[j] * to_float(x_row[j]);
    const float correction = r * r * (block_sum(dot, shared) / static_cast<float>(width));
    for (int64_t j = threadIdx.x; j < width; j += blockDim.x) {
      const float gj = to_float(g_row[j]);
      const float xj = to_float(x_row[j]);
      const float extra = residual_row != nullptr ? to_float(residual_row[j]) : 0.0f;
      out[j] = from_float<T>(r * (gj * scale[j] - xj * correction) + extra);
      if (own != nullptr) own[j] += gj * xj * r;
    }
  }
}

template <typename T>
void launch_forward(const void* x, const void* branch, const float* scale, void* sum, void* y, float* rstd,
                    int64_t rows, int64_t width, float eps, cudaStream_t s) {
  launch(rms_norm_forward_kernel<T>, dim3(static_cast<unsigned>(rows)), threads_for(width), s,
         static_cast<const T*>(x), static_cast<const T*>(branch), scale, static_cast<T*>(sum), static_cast<T*>(y), rstd,
         width, eps);
}

template <typename T>
void launch_backward(const void* g, const void* x, const void* residual, const float* scale, const float* rstd,
                     void* grad_x, float* partial, int64_t parts, int64_t rows, int64_t width, cudaStream_t s) {
  launch(rms_norm_backward_kernel<T>, dim3(static_cast<unsigned>(parts)), threads_for(width), s,
         static_cast<const T*>(g), static_cast<const T*>(x), static_cast<const T*>(residual), scale, rstd,
         static_cast<T*>(grad_x), partial, parts, rows, width);
}

std::string forward_of(const char* what, RowType type, const void* x, const void* branch, const float* scale,
                       void* sum, void* y, float* rstd, int64_t rows, int64_t width, float eps, void* stream) {
  if (rows <= 0 || width <= 0) return {};
  if (rows > kMaxGrid) return std::string(what) + ": more rows than one launch's grid holds";
  const auto s = static_cast<cudaStream_t>(stream);
  if (type == RowType::bf16)
    launch_forward<__nv_bfloat16>(x, branch, scale, sum, y, rstd, rows, width, eps, s);
  else
    launch_forward<float>(x, branch, scale, sum, y, rstd, rows, width, eps, s);
  return launch_result(what);
}

std::string backward_of(const char* what, RowType type, const void* g, const void* x, const void* residual,
                        const float* scale, const float* rstd, void* grad_x, float* partial, int64_t parts,
                        int64_t rows, int64_t width, void* stream) {
  if (rows <= 0 || width <= 0) return {};
  if (parts < 1 || parts > kMaxGrid) return std::string(what) + ": parts must be 1..2^31-1";
  const auto s = static_cast<cudaStream_t>(stream);
  if (type == RowType::bf16)
    launch_backward<__nv_bfloat16>(g, x, residual, scale, rstd, grad_x, partial, parts, rows, width, s);
  else
    launch_backward<float>(g, x, residual, scale, rstd, grad_x, partial, parts, rows, width, s);
  return launch_result(what);
}

}  // namespace

std::string rms_norm_forward(RowType type, const void* x, const float* scale, void* y, float* rstd, int64_t rows,
                             int64_t width, float eps, void* stream) {
  return forward_of("rms_norm_forward", type, x, nullptr, scale, nullptr, y, rstd, rows, width, eps, stream);
}

std::string rms_norm_backward(RowType type, const void* g, const void* x, const float* scale, const float* rstd,
                              void* grad_x, float* grad_weight_partial, int64_t parts, int64_t rows, int64_t width,
                              void* stream) {
  return backward_of("rms_norm_backward", type, g, x, nullptr, scale, rstd, grad_x, grad_weight_partial, parts, rows,
                     width, stream);
}

std::string add_rms_norm_forward(RowType type, const void* branch, const void* x, const float* scale, void* sum,
                                 void* y, float* rstd, int64_t rows, int64_t width, float eps, void* stream) {
  return forward_of("add_rms_norm_forward", type, x, branch, scale, sum, y, rstd, rows, width, eps, stream);
}

std::string add_rms_norm_backward(RowType type, const void* g, const void* grad_sum, const void* sum,
                                  const float* scale, const float* rstd, void* grad_input, float* grad_weight_partial,
                                  int64_t parts, int64_t rows, int64_t width, void* stream) {
  return backward_of("add_rms_norm_backward", type, g, sum, grad_sum, scale, rstd, grad_input, grad_weight_partial,
                     parts, rows, width, stream);
}

}  // namespace tokbench::cuda
