// The CPU references of the gated MLP activation and rotary embedding kernels
// (test_mlp_rope_hooks.cpp on the CPU, test_mlp_rope_cuda.cpp on a GPU): the eager model's ATen
// compositions (model/gpt.cpp's MLP and Attention); the fixture models come from
// fixture_model.hpp. Tolerances stay with each suite.
#pragma once

#include <gtest/gtest.h>
#include <torch/torch.h>

#include "fixture_model.hpp"
#include "model/gate_activation.hpp"
#include "model/gpt_rope.hpp"

namespace tokbench::train::testing {

// The eager MLP's act(gate) · up, each operator rounding to the inputs' dtype.
inline torch::Tensor aten_gated_activation(const torch::Tensor& gate, const torch::Tensor& up,
                                           model::GateActivation activation) {
  switch (activation) {
    case model::GateActivation::silu: return torch::silu(gate) * up;
    case model::GateActivation::gelu: return torch::gelu(gate, "none") * up;
    case model::GateActivation::gelu_tanh: return torch::gelu(gate, "tanh") * up;
  }
  return {};
}

// The eager attention's rope: x (B, H, T, D), cos and sin (1, T, n); litgpt's apply_rope on
// the first n channels, the rest passed through.
inline torch::Tensor aten_rope(const torch::Tensor& x, const torch::Tensor& cos, const torch::Tensor& sin) {
  using namespace torch::indexing;
  const int64_t n = cos.size(-1);
  auto roped = model::apply_rope(x.index({Ellipsis, Slice(None, n)}), cos, sin);
  return torch::cat({roped, x.index({Ellipsis, Slice(n, None)})}, -1);
}

}  // namespace tokbench::train::testing
