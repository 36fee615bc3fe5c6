// A residual add fused into the norm that reads it (litgpt's `x = a + x; h = norm_2(x)`, and a
// block's closing add with the next block's norm_1 or ln_f), RMSNorm or LayerNorm, as one
// autograd function with two outputs, for the fused executor on a CUDA device: forward reads
// a and x once and writes the sum and the norm of it (cuda/rms_norm_kernels.hpp and
// cuda/layer_norm_kernels.hpp, add_*_norm_*); backward adds the gradient reaching the sum from
// the residual path in the pass that writes grad_x, and returns that one tensor as the gradient
// of both a and x, as ATen's add backward does. On CPU tensors the same steps run as ATen
// operators (the same math and roundings), so the host side is tested without a GPU.
#pragma once

#include <ATen/core/Tensor.h>

#include <utility>

namespace tokbench::train {

// a, x: one shape (..., C), one dtype (fp32 or bf16), on one CPU or CUDA device, any strides;
// weight: (C) on that device -> (a + x, the RMSNorm of it) in x's dtype: the sum rounded once,
// as ATen's add rounds it, and the norm (rms_norm_rows.hpp's math, w = 1 + weight under Gemma's
// unit offset) of that rounded sum. Differentiable in a, x and weight. Refuses (c10::Error)
// other dtypes, devices and shapes, before any work.
std::pair<at::Tensor, at::Tensor> add_rms_norm_rows(const at::Tensor& a, const at::Tensor& x, const at::Tensor& weight,
                                                    bool unit_offset, double eps);

// a, x as add_rms_norm_rows's; weight, bias: (C) on that device, any floating dtype, each
// possibly undefined (OLMo's LayerNorm has neither: weight 1, bias 0) -> (a + x, the LayerNorm of
// it) in x's dtype: the sum rounded once, as ATen's add rounds it, and layer_norm_rows.hpp's
// math (fp32 mean and biased variance, rounded once) of that rounded sum. Differentiable in a,
// x, weight and bias. Refuses (c10::Error) other dtypes, devices and shapes, before any work.
std::pair<at::Tensor, at::Tensor> add_layer_norm_rows(const at::Tensor& a, const at::Tensor& x,
                                                      const at::Tensor& weight, const at::Tensor& bias, double eps);

}  // namespace tokbench::train
