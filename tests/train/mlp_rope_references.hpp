// The CPU references of the gated MLP activation and rotary embedding kernels
// (test_mlp_rope_hooks.cpp on the CPU, test_mlp_rope_cuda.cpp on a GPU): the eager model's ATen
// compositions (model/gpt.cpp's MLP and Attention), and a fixture model of the equivalence
// suite built on a device. Tolerances stay with each suite.
#pragma once

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <map>
#include <string>
#include <vector>

#include "../model/test_gpt_support.hpp"
#include "model/config_json.hpp"
#include "model/gate_activation.hpp"
#include "model/gpt.hpp"
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

// A fixture of the model equivalence suite (tests/fixtures/model/equivalence/<family>): its
// model with the fixture's weights, in `dtype` on `device`, every parameter requiring grad,
// and its input token ids (on `device`).
struct FixtureModel {
  model::GPT gpt{nullptr};
  torch::Tensor input;
};

inline FixtureModel fixture_model(const std::string& family, torch::ScalarType dtype, const torch::Device& device) {
  const auto dir = model::testing::fixtures_dir() / "model" / "equivalence";
  const auto doc = model::testing::read_json(dir / (family + ".json"));
  const auto tensors = model::testing::read_blob(doc.at("tensors"), dir / (family + ".bin"));
  model::Config config;
  std::vector<std::string> problems;
  model::config_from_json(doc.at("config"), config, problems);
  for (const auto& p : problems) ADD_FAILURE() << family << ": " << p;
  config.finalize();
  std::map<std::string, torch::Tensor> params;
  for (const auto& [name, t] : tensors)
    if (name.rfind("param/", 0) == 0) params.emplace(name.substr(6), t);
  FixtureModel fixture;
  fixture.gpt = model::GPT(config, torch::TensorOptions().dtype(dtype).device(device));
  fixture.gpt->load_state(params);
  for (auto& p : fixture.gpt->parameters()) p.set_requires_grad(true);
  fixture.input = tensors.at("input").to(device);
  return fixture;
}

}  // namespace tokbench::train::testing
