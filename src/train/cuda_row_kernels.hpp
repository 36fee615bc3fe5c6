// The fused executor's row kernels on a CUDA device (the kernels are in src/cuda/): the ATen
// side of RMSNorm's two passes (rms_norm_rows.cpp's autograd function is the same for both
// devices and calls these for CUDA tensors) and of the chunked loss's cross-entropy
// (fused_ops.cpp). Each binds the tensors' own device for the launch and runs on that device's
// current stream, as every ATen operation on those tensors does, so they order with the ops
// around them. cuda_row_kernels_none.cpp stands in for builds without CUDA (they throw).
#pragma once

#include <ATen/core/Tensor.h>

#include <optional>

namespace tokbench::train {

// x2: (R, C) contiguous fp32 or bf16; scale: (C) fp32; y: like x2; rstd: (R) fp32.
void rms_norm_cuda_forward(const at::Tensor& x2, const at::Tensor& scale, const at::Tensor& y, const at::Tensor& rstd,
                           double eps);

// g, x2, grad_x: (R, C) contiguous, one dtype; scale, rstd as the forward's. Returns grad_w's
// fp32 (C) sum when want_weight, else an undefined tensor.
at::Tensor rms_norm_cuda_backward(const at::Tensor& g, const at::Tensor& x2, const at::Tensor& scale,
                                  const at::Tensor& rstd, const at::Tensor& grad_x, bool want_weight);

// cross_entropy_rows_in_place (cross_entropy_rows.hpp) on CUDA, with the gradient's scale a
// one-element fp32 tensor on the logits' device instead of a host number (no read back):
// logits (R, V) contiguous fp32 or bf16, overwritten with the gradient; targets (R) int64.
// Returns the per-row losses (R) fp32.
at::Tensor cross_entropy_rows_cuda_in_place(const at::Tensor& logits, const at::Tensor& targets,
                                            std::optional<double> softcap, const at::Tensor& grad_scale);

}  // namespace tokbench::train
