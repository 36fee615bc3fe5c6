// The gated MLP's activation, act(gate) · up, as one autograd function on a CUDA device: one
// kernel forward and one backward that writes grad_gate and grad_up together
// (cuda/gated_activation_kernels.hpp says what that saves). The fused executor installs it as
// the model's gate function on CUDA only: on the CPU ATen's silu and mul stay, since a fused
// CPU kernel measured slower there (docs/PERFORMANCE.md).
#pragma once

#include <ATen/core/Tensor.h>

#include "model/gate_activation.hpp"

namespace tokbench::train {

// gate, up: one shape, one dtype (fp32 or bf16), on one CUDA device, any strides -> act(gate) ·
// up, contiguous, in their dtype; the math in fp32, rounded once. Differentiable in both.
// Refuses (c10::Error) CPU tensors, other dtypes and mismatched shapes, before any work.
at::Tensor gated_activation(const at::Tensor& gate, const at::Tensor& up, model::GateActivation activation);

}  // namespace tokbench::train
