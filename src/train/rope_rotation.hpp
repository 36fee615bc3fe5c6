// litgpt's rotary embedding of q or k (model/gpt_rope.hpp's apply_rope on the first
// rope_n_elem channels of each head, the rest passed through, and the cat that joins them) as
// one autograd function on a CUDA device: one kernel forward that reads the heads where the
// qkv projection left them and writes the rotated heads, and one backward, the transposed
// rotation of the gradient (cuda/rope_kernels.hpp). The fused executor installs it as the
// model's rope function on CUDA only; the CPU keeps ATen's composition.
#pragma once

#include <ATen/core/Tensor.h>

namespace tokbench::train {

// x: (B, H, T, D) fp32 or bf16 on a CUDA device, any strides; cos, sin: (1, T, n) or (T, n)
// on the same device (cast to x's dtype if they differ), n even, 0 ≤ n ≤ D -> (B, H, T, D)
// contiguous in x's dtype: x's first n channels rotated as litgpt's apply_rope does, the
// others copied (n = 0: x itself). Differentiable in x (cos and sin are the model's buffers: no gradient).
// Refuses (c10::Error) CPU tensors, other dtypes and mismatched shapes, before any work.
at::Tensor rope_rotation(const at::Tensor& x, const at::Tensor& cos, const at::Tensor& sin);

}  // namespace tokbench::train
