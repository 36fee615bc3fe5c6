// rms_norm_rows's two passes on a CUDA device (the kernels are cuda/rms_norm_kernels.cu): the
// autograd function in rms_norm_rows.cpp is the same for both devices and calls these for CUDA
// tensors. Each binds the tensors' own device for the launch and runs on that device's current
// stream, as every ATen operation on those tensors does, so they order with the ops around them.
// rms_norm_cuda_none.cpp stands in for builds without CUDA (they throw).
#pragma once

#include <ATen/core/Tensor.h>

namespace tokbench::train {

// x2: (R, C) contiguous fp32 or bf16; scale: (C) fp32; y: like x2; rstd: (R) fp32.
void rms_norm_cuda_forward(const at::Tensor& x2, const at::Tensor& scale, const at::Tensor& y, const at::Tensor& rstd,
                           double eps);

// g, x2, grad_x: (R, C) contiguous, one dtype; scale, rstd as the forward's. Returns grad_w's
// fp32 (C) sum when want_weight, else an undefined tensor.
at::Tensor rms_norm_cuda_backward(const at::Tensor& g, const at::Tensor& x2, const at::Tensor& scale,
                                  const at::Tensor& rstd, const at::Tensor& grad_x, bool want_weight);

}  // namespace tokbench::train
