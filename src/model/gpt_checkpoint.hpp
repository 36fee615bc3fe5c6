// Activation checkpointing of one transformer block (the reference's --checkpoint_activations,
// torch.utils.checkpoint per block): forward runs the block without keeping its activations and
// keeps only its input; backward runs the block's forward again from that input, with autograd
// on, and back-propagates through it (PyTorch's reentrant form, whose inner backward accumulates
// into the parameters' .grad like any backward, so every gradient hook of a parallel step sees
// its gradients as usual).
//
// The recomputation stops early, as PyTorch's non-reentrant checkpoint does: whatever no
// backward formula reads is not computed again. In a block that ends `mlp.proj(h) + x` that is
// the MLP's output projection: its backward needs h and the weight, never its output, so the
// recomputation builds its graph without its GEMM (linear_graph_only). So tokbench recomputes
// exactly the FLOPs PyTorch's FlopCounterMode counts for litgpt under torch.utils.checkpoint
// (model/counting.hpp, count_recompute_flops).
#pragma once

#include <ATen/core/Tensor.h>

#include <functional>

namespace tokbench::model {

// A block's forward from its input. `tail_value_needed` false: the recomputation for backward,
// whose output value is never read (only its graph is), so a tail whose value nothing needs may
// be built with linear_graph_only.
using BlockForward = std::function<at::Tensor(const at::Tensor& x, bool tail_value_needed)>;

// run(x, true) without an autograd graph, with a backward that recomputes run(x', false) from a
// copy x' of the input. Without grad mode (or when x needs no gradient) it is run(x, true).
// The autocast state at this call is the recomputation's too.
at::Tensor checkpoint_block(const at::Tensor& x, BlockForward run);

// x·Wᵀ + b as a graph only: the output has the right shape, dtype and autograd history, but no
// defined values (the GEMM is not run); its backward computes exactly at::linear's gradients
// (mm of the gradient with the weight, and of the input with the gradient; the bias's is a
// row sum). Under autocast, x, W and b are cast first, as at::linear's autocast wrapper does.
at::Tensor linear_graph_only(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias);

}  // namespace tokbench::model
