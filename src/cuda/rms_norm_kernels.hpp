// RMSNorm's forward and backward as CUDA kernels, for the fused executor on a CUDA device
// (train/rms_norm_rows.cpp calls them with the tensors' pointers and their device's stream).
// They fuse what litgpt's module runs as about six elementwise and reduction kernels forward
// (float cast, square, mean, rsqrt, two products, cast back) and more backward into one pass
// over each row each way, keeping only rstd (one float per row) for backward. The math is the
// CPU row kernel's (train/rms_norm_rows_kernel.hpp), in fp32 whatever the storage type:
//   forward   y = x · rstd · w,  rstd = 1 / sqrt(mean(x²) + eps)
//   backward  grad_x = rstd · (g·w − x · rstd² · mean(g·w·x)),  grad_w = Σ_rows g · x · rstd
// grad_w is summed without atomics: block p owns rows [R·p/P, R·(p+1)/P) and writes its own
// row of a (P, C) fp32 partial, which the caller sums; the same inputs give the same bits.
// Plain pointers and a stream passed as void* (a cudaStream_t), so no caller needs CUDA's
// headers; each launch returns "" or the CUDA error's text.
#pragma once

#include <cstdint>
#include <string>

#include "cuda/row_type.hpp"

namespace tokbench::cuda {

// x, y: (rows, width) contiguous in `type`; scale: (width) fp32 (litgpt's 1 + w already
// applied); rstd: (rows) fp32, written.
std::string rms_norm_forward(RowType type, const void* x, const float* scale, void* y, float* rstd, int64_t rows,
                             int64_t width, float eps, void* stream);

// g, x, grad_x: (rows, width) contiguous in `type`; scale (width) and rstd (rows) fp32 from the
// forward. grad_weight_partial: (parts, width) fp32, every element written (zeros first), or
// null when grad_w is not wanted; parts ≥ 1.
std::string rms_norm_backward(RowType type, const void* g, const void* x, const float* scale, const float* rstd,
                              void* grad_x, float* grad_weight_partial, int64_t parts, int64_t rows, int64_t width,
                              void* stream);

// The residual add fused in front (a sequential block's `x = a + x; h = norm_2(x)`): forward
// reads branch (a) and x once and writes sum = a + x, rounded to `type` as ATen's add rounds
// it, and y = the norm of that rounded sum; backward is rms_norm_backward over `sum` with
// grad_sum (the gradient reaching the sum from the residual path) added to grad_x in fp32
// before its one rounding, which makes grad_input the gradient of both a and x. Saves the
// add's kernel and one read of the sum forward, and the gradients' add kernel backward.
// branch, x, sum, y, g, grad_sum, grad_input: (rows, width) contiguous in `type`; the rest as
// rms_norm_forward's and rms_norm_backward's.
std::string add_rms_norm_forward(RowType type, const void* branch, const void* x, const float* scale, void* sum,
                                 void* y, float* rstd, int64_t rows, int64_t width, float eps, void* stream);
std::string add_rms_norm_backward(RowType type, const void* g, const void* grad_sum, const void* sum,
                                  const float* scale, const float* rstd, void* grad_input, float* grad_weight_partial,
                                  int64_t parts, int64_t rows, int64_t width, void* stream);

}  // namespace tokbench::cuda
