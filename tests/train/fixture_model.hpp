// A fixture of the model equivalence suite (tests/fixtures/model/equivalence/<family>) built
// as a GPT on a device with the fixture's weights: what the row-kernel suites install their
// hooks in (test_norm_rows.cpp on the CPU; test_mlp_rope_*.cpp, test_layer_norm_cuda.cpp,
// test_add_norm_cuda.cpp), and the one forward and seeded backward they compare.
#pragma once

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <map>
#include <string>
#include <vector>

#include "../model/test_gpt_support.hpp"
#include "model/config_json.hpp"
#include "model/gpt.hpp"

namespace tokbench::train::testing {

struct FixtureModel {
  model::GPT gpt{nullptr};
  torch::Tensor input;  // the fixture's token ids, on the model's device
};

// The family's model with the fixture's weights, in `dtype` on `device`, every parameter
// requiring grad, and its input token ids. A config problem is a test failure.
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

struct ModelOutcome {
  torch::Tensor hidden;                        // forward_hidden's output
  std::map<std::string, torch::Tensor> grads;  // every parameter's gradient (zeros where none arrived)
};

// forward_hidden of the fixture (with whatever hooks the caller installed) and the gradients of
// Σ hidden·g, g drawn on the CPU from seed 5 and copied to the model's device, so every device
// and every hook sees the same g. The outcome is copied back to the CPU.
inline ModelOutcome forward_and_backward(FixtureModel& fixture) {
  const auto hidden = fixture.gpt->forward_hidden(fixture.input);
  torch::manual_seed(5);
  (hidden * torch::randn(hidden.sizes()).to(hidden.device())).sum().backward();
  ModelOutcome o;
  const auto to_cpu = [](const torch::Tensor& t) { return t.detach().to(torch::kCPU, false, /*copy=*/true); };
  o.hidden = to_cpu(hidden);
  for (const auto& item : fixture.gpt->named_parameters())
    o.grads[item.key()] =
        item.value().grad().defined() ? to_cpu(item.value().grad()) : torch::zeros_like(to_cpu(item.value()));
  return o;
}

}  // namespace tokbench::train::testing
