// LayerNorm's forward and backward as CUDA kernels, for the fused executor on a CUDA device
// (train/layer_norm_rows.cpp calls them through cuda_row_kernels.hpp), for the LayerNorm
// models (pythia, phi, GPT-NeoX, falcon). ATen's own LayerNorm is already one kernel forward;
// backward is two (grad_x, then grad_w and grad_b in a second pass over g and x). These take
// one pass over each row forward and one backward that writes grad_x and sums grad_w and grad_b
// in the same pass. With the residual add fused in front (add_layer_norm_*) they also read the
// add's two inputs instead of its output and add the sum's gradient into grad_x.
// The math, in fp32 whatever the storage type, keeping mean and rstd (two floats per row):
//   forward   y = (x − mean) · rstd · w + b,  rstd = 1 / sqrt(mean((x − mean)²) + eps)
//   backward  x̂ = (x − mean) · rstd,  grad_x = rstd · (g·w − mean(g·w) − x̂ · mean(g·w·x̂)),
//             grad_w = Σ_rows g · x̂,  grad_b = Σ_rows g
// grad_w and grad_b are summed without atomics, as RMSNorm's grad_w (rms_norm_kernels.hpp):
// block p owns a fixed range of rows and writes its own row of each (P, C) fp32 partial.
// Plain pointers and a stream passed as void* (a cudaStream_t), so no caller needs CUDA's
// headers; each launch returns "" or the CUDA error's text.
#pragma once

#include <cstdint>
#include <string>

#include "cuda/row_type.hpp"

namespace tokbench::cuda {

// x, y: (rows, width) contiguous in `type`; weight, bias: (width) fp32, or null (OLMo's LayerNorm
// without parameters: weight 1, bias 0); mean, rstd: (rows) fp32, written.
std::string layer_norm_forward(RowType type, const void* x, const float* weight, const float* bias, void* y,
                               float* mean, float* rstd, int64_t rows, int64_t width, float eps, void* stream);

// g, x, grad_x: (rows, width) contiguous in `type`; weight (width, or null), mean and rstd
// (rows) fp32 from the forward. grad_weight_partial, grad_bias_partial: (parts, width) fp32, every element
// written (zeros first), or null when that gradient is not wanted; parts ≥ 1.
std::string layer_norm_backward(RowType type, const void* g, const void* x, const float* weight, const float* mean,
                                const float* rstd, void* grad_x, float* grad_weight_partial, float* grad_bias_partial,
                                int64_t parts, int64_t rows, int64_t width, void* stream);

// The residual add fused in front (`x = a + x; h = norm(x)`: OLMo's norm_2, and a block's
// closing add with the next block's norm_1 or ln_f): forward reads branch (a) and x once and
// writes sum = a + x, rounded to `type` as ATen's add rounds it, and y = the norm of that
// rounded sum; backward is layer_norm_backward over `sum` with grad_sum (the gradient reaching
// the sum from the residual path) added to grad_x in fp32 before its one rounding, which makes
// grad_input the gradient of both a and x. branch, x, sum, y, g, grad_sum, grad_input:
// (rows, width) contiguous in `type`; the rest as layer_norm_forward's and layer_norm_backward's.
std::string add_layer_norm_forward(RowType type, const void* branch, const void* x, const float* weight,
                                   const float* bias, void* sum, void* y, float* mean, float* rstd, int64_t rows,
                                   int64_t width, float eps, void* stream);
std::string add_layer_norm_backward(RowType type, const void* g, const void* grad_sum, const void* sum,
                                    const float* weight, const float* mean, const float* rstd, void* grad_input,
                                    float* grad_weight_partial, float* grad_bias_partial, int64_t parts, int64_t rows,
                                    int64_t width, void* stream);

}  // namespace tokbench::cuda
