// litgpt's LayerNorm (with weight and bias) as one autograd function, for the fused executor
// on a CUDA device: one kernel forward keeping only each row's fp32 mean and rstd, one kernel
// backward writing grad_x and summing grad_w and grad_b in fixed-order fp32 parts
// (cuda/layer_norm_kernels.hpp says what that saves against ATen's). The fused executor installs it as the
// model's LayerNorm function on CUDA only: on the CPU ATen's layer_norm is one vectorised
// pass already. On CPU tensors the same passes run as ATen operators, the same math (mean,
// rstd kept; the same backward formula), so the host side is tested without a GPU.
#pragma once

#include <ATen/core/Tensor.h>

namespace tokbench::train {

// x: (..., C) fp32 or bf16 on the CPU or a CUDA device (any strides); weight, bias: (C), any
// floating dtype, on x's device -> (..., C) in x's dtype: ((x − mean) · rstd · w + b) with
// rstd = 1 / sqrt(var + eps) (biased variance), all in fp32, rounded once, as
// torch::layer_norm computes it. Differentiable in x, weight and bias. Refuses (c10::Error)
// other dtypes, devices and shapes, before any work.
at::Tensor layer_norm_rows(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias, double eps);

}  // namespace tokbench::train
