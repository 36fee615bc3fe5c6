// The fused executor's row kernels on a CUDA device (the kernels are in src/cuda/): the ATen
// side of RMSNorm's and LayerNorm's two passes (rms_norm_rows.cpp's, add_norm_rows.cpp's and
// layer_norm_rows.cpp's autograd functions are the same for both devices and call these for
// CUDA tensors) and of the chunked loss's cross-entropy
// (fused_ops.cpp), and the launches of the gated MLP activation (gated_activation.cpp) and of
// the rotary embedding (rope_rotation.cpp). Each binds the tensors' own device for the launch and runs on that device's
// current stream, as every ATen operation on those tensors does, so they order with the ops
// around them. cuda_row_kernels_none.cpp stands in for builds without CUDA (they throw).
#pragma once

#include <ATen/core/Tensor.h>

#include <optional>
#include <utility>

#include "model/gate_activation.hpp"

namespace tokbench::train {

// x2: (R, C) contiguous fp32 or bf16; scale: (C) fp32; y: like x2; rstd: (R) fp32.
void rms_norm_cuda_forward(const at::Tensor& x2, const at::Tensor& scale, const at::Tensor& y, const at::Tensor& rstd,
                           double eps);

// g, x2, grad_x: (R, C) contiguous, one dtype; scale, rstd as the forward's. Returns grad_w's
// fp32 (C) sum when want_weight, else an undefined tensor.
at::Tensor rms_norm_cuda_backward(const at::Tensor& g, const at::Tensor& x2, const at::Tensor& scale,
                                  const at::Tensor& rstd, const at::Tensor& grad_x, bool want_weight);

// The residual add fused in front (add_norm_rows.hpp): a2, x2, sum, y: (R, C) contiguous, one
// dtype; scale, rstd as rms_norm_cuda_forward's. Writes sum = a2 + x2 and y = its norm.
void add_rms_norm_cuda_forward(const at::Tensor& a2, const at::Tensor& x2, const at::Tensor& scale,
                               const at::Tensor& sum, const at::Tensor& y, const at::Tensor& rstd, double eps);

// Its backward: rms_norm_cuda_backward over sum2 with grad_sum (R, C) added to grad_input.
at::Tensor add_rms_norm_cuda_backward(const at::Tensor& g, const at::Tensor& grad_sum, const at::Tensor& sum2,
                                      const at::Tensor& scale, const at::Tensor& rstd, const at::Tensor& grad_input,
                                      bool want_weight);

// x2: (R, C) contiguous fp32 or bf16; weight, bias: (C) fp32; y: like x2; mean, rstd: (R) fp32.
void layer_norm_cuda_forward(const at::Tensor& x2, const at::Tensor& weight, const at::Tensor& bias,
                             const at::Tensor& y, const at::Tensor& mean, const at::Tensor& rstd, double eps);

// g, x2, grad_x: (R, C) contiguous, one dtype; weight, mean, rstd as the forward's. Returns
// grad_w's and grad_b's fp32 (C) sums, each an undefined tensor where not wanted.
std::pair<at::Tensor, at::Tensor> layer_norm_cuda_backward(const at::Tensor& g, const at::Tensor& x2,
                                                           const at::Tensor& weight, const at::Tensor& mean,
                                                           const at::Tensor& rstd, const at::Tensor& grad_x,
                                                           bool want_weight, bool want_bias);

// The residual add fused in front of LayerNorm (add_norm_rows.hpp): a2, x2, sum, y: (R, C)
// contiguous, one dtype; weight, bias: (C) fp32 or undefined (no weight: 1; no bias: 0); mean,
// rstd: (R) fp32. Writes sum = a2 + x2 and y = its norm.
void add_layer_norm_cuda_forward(const at::Tensor& a2, const at::Tensor& x2, const at::Tensor& weight,
                                 const at::Tensor& bias, const at::Tensor& sum, const at::Tensor& y,
                                 const at::Tensor& mean, const at::Tensor& rstd, double eps);

// Its backward: layer_norm_cuda_backward over sum2 (weight may be undefined) with grad_sum (R, C)
// added to grad_input.
std::pair<at::Tensor, at::Tensor> add_layer_norm_cuda_backward(const at::Tensor& g, const at::Tensor& grad_sum,
                                                               const at::Tensor& sum2, const at::Tensor& weight,
                                                               const at::Tensor& mean, const at::Tensor& rstd,
                                                               const at::Tensor& grad_input, bool want_weight,
                                                               bool want_bias);

// cross_entropy_rows_in_place (cross_entropy_rows.hpp) on CUDA, with the gradient's scale a
// one-element fp32 tensor on the logits' device instead of a host number (no read back):
// logits (R, V) contiguous fp32 or bf16, overwritten with the gradient; targets (R) int64.
// Returns the per-row losses (R) fp32.
at::Tensor cross_entropy_rows_cuda_in_place(const at::Tensor& logits, const at::Tensor& targets,
                                            std::optional<double> softcap, const at::Tensor& grad_scale);

// gate, up, h: one shape, contiguous, fp32 or bf16, on one CUDA device; h = act(gate) · up.
void gated_activation_cuda_forward(const at::Tensor& gate, const at::Tensor& up, const at::Tensor& h,
                                   model::GateActivation activation);

// grad_h, gate, up, grad_gate, grad_up: as the forward's; grad_gate and grad_up written.
void gated_activation_cuda_backward(const at::Tensor& grad_h, const at::Tensor& gate, const at::Tensor& up,
                                    const at::Tensor& grad_gate, const at::Tensor& grad_up,
                                    model::GateActivation activation);

// x: (B, H, T, D), its last dimension contiguous; cos, sin: (T, n) contiguous in x's dtype;
// y: (B, H, T, D) contiguous, not overlapping x. Writes y = the rotation of x's first n
// channels (its transpose when inverse), the rest copied (cuda/rope_kernels.hpp).
void rope_cuda_rotate(const at::Tensor& x, const at::Tensor& cos, const at::Tensor& sin, const at::Tensor& y,
                      bool inverse);

}  // namespace tokbench::train
