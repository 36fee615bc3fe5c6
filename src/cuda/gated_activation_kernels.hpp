// The gated MLP's activation as CUDA kernels, for the fused executor on a CUDA device
// (train/gated_activation.cpp calls them): h = act(gate) · up, with act SiLU (LLaMAMLP's
// SwiGLU) or GELU, exact or tanh-approximated (GemmaMLP's GeGLU). Eager runs it as two
// kernels forward (act, mul), each writing a full (rows, hidden) tensor, and three backward
// (mul's two products, the activation's backward), keeping act(gate) besides gate and up;
// here forward is one pass writing h, and backward one pass writing grad_gate and grad_up, with
// only gate and up kept from forward (act(gate) is recomputed). The math is in fp32 whatever the storage type.
// Plain pointers and a stream passed as void* (a cudaStream_t), so no caller needs CUDA's
// headers; each launch returns "" or the CUDA error's text.
#pragma once

#include <cstdint>
#include <string>

#include "cuda/row_type.hpp"

namespace tokbench::cuda {

enum class GateActivation { silu, gelu, gelu_tanh };

// gate, up, h: `count` contiguous elements in `type`; h = act(gate) · up.
std::string gated_activation_forward(RowType type, GateActivation activation, const void* gate, const void* up,
                                     void* h, int64_t count, void* stream);

// grad_h, gate, up, grad_gate, grad_up: `count` contiguous elements in `type`;
// grad_gate = grad_h · up · act'(gate), grad_up = grad_h · act(gate).
std::string gated_activation_backward(RowType type, GateActivation activation, const void* grad_h, const void* gate,
                                      const void* up, void* grad_gate, void* grad_up, int64_t count, void* stream);

}  // namespace tokbench::cuda
