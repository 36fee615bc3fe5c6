// LLaMAMLP's gate, silu(fc_1(x)) · fc_2(x), as one autograd function on the CPU: forward is
// one pass over both inputs; backward one pass that recomputes σ from the saved gate input
// and writes both gradients, where the eager composition runs silu, mul, and in backward
// two muls and silu_backward, each streaming the (B, T, hidden) activations through memory.
#pragma once

#include <ATen/core/Tensor.h>

namespace tokbench::train {

// gate, up: same shape, fp32 or bf16 on the CPU (any strides) -> silu(gate) · up in their
// dtype, computed in fp32 and rounded once. Differentiable in both.
at::Tensor swiglu(const at::Tensor& gate, const at::Tensor& up);

}  // namespace tokbench::train
