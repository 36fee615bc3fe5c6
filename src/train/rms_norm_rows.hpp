// litgpt's RMSNorm as one autograd function, on the CPU or a CUDA device: per row, one pass for the fp32 mean
// of squares and one that writes x · rstd · w, keeping only rstd (one float per row) for
// backward; backward is two passes per row (the row's Σ g·w·x, then grad_x) that also
// accumulate grad_weight in per-part fp32 sums, added in a fixed order at the end (no
// atomics: the same inputs and thread count give the same bits). The eager module instead
// runs about six whole-tensor ATen ops forward and more backward, each streaming the
// activations through memory. On CUDA the same passes run as kernels (cuda_row_kernels.hpp), a
// block per row forward and a block per range of rows backward.
#pragma once

#include <ATen/core/Tensor.h>

namespace tokbench::train {

// x: (..., C) fp32 or bf16 on the CPU or a CUDA device (any strides; weight on the same device), weight: (C) -> (..., C) in x's dtype:
// (x_f32 · rsqrt(mean(x_f32²) + eps) · w_f32) cast back, with w = 1 + weight under Gemma's
// unit offset (computed in weight's dtype, as litgpt). Differentiable in x and weight.
at::Tensor rms_norm_rows(const at::Tensor& x, const at::Tensor& weight, bool unit_offset, double eps);

// The vector ISA whose row kernel runs: "DEFAULT", "AVX2" or "AVX512" (at::get_cpu_capability).
const char* rms_norm_rows_isa();

}  // namespace tokbench::train
