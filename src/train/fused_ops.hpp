// The autograd functions of the fused executor (fused_step.cpp):
//  * fused_linear: y = x·Wᵀ + b whose forward and both backward GEMMs go through the kernel
//    measured fastest for their shape class (gemm_kernels.hpp); grad-bias is a row sum.
//  * chunked_linear_cross_entropy: the lm_head and the loss in one, over row chunks of the
//    B·T positions, so the B×T×V logits never exist at once. The gradient of a scalar mean
//    loss is known up to its upstream scale while the chunk's logits are still at hand, so
//    forward computes grad_hidden and grad_weight chunk by chunk (no recompute in backward)
//    and backward only scales them. Each chunk's loss and logit gradient come from a row
//    kernel: on the CPU the one-pass kernel (cross_entropy_rows.hpp), on CUDA
//    cuda/cross_entropy_kernels.cu (fp32 and bf16 logits); from whole-chunk ATen ops otherwise.
// Neither reads a value back to the host.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <optional>

#include "train/gemm_kernels.hpp"

namespace tokbench::train {

// x: (..., K), weight: (N, K), bias: (N) or undefined -> (..., N). Differentiable in all three.
at::Tensor fused_linear(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias,
                        const GemmChoices& choices);
// fused_linear's graph without its forward GEMM: the output has no defined values, its backward
// is fused_linear's (for the projection a checkpoint's recomputation does not read,
// model/gpt_checkpoint.hpp).
at::Tensor fused_linear_graph_only(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias,
                                   const GemmChoices& choices);

struct ChunkedCrossEntropyOptions {
  int64_t chunk_rows = 1024;           // positions per chunk
  std::optional<double> softcap;       // final logit soft-capping: c·tanh(z / c) (Gemma-2)
};

// Rows per chunk that keep one chunk's fp32 logits near 256 MB, at least 128 rows so the
// GEMMs stay efficient.
int64_t default_chunk_rows(int64_t vocab);

// hidden: (N, C), weight: (V, C), bias: (V) or undefined, targets: (N) int64 with -1 ignored.
// Returns at::cross_entropy_loss(hidden·Wᵀ + b, targets, mean, ignore_index = -1) as an fp32
// scalar (NaN when every target is ignored, as torch), differentiable in hidden, weight, bias.
at::Tensor chunked_linear_cross_entropy(const at::Tensor& hidden, const at::Tensor& weight, const at::Tensor& bias,
                                        const at::Tensor& targets, const GemmChoices& choices,
                                        const ChunkedCrossEntropyOptions& options);

}  // namespace tokbench::train
