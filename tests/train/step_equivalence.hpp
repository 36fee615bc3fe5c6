// What the step-equivalence tests share: the tiny model of each family of the equivalence
// fixtures (tests/fixtures/model/equivalence, litgpt's own weights and batch), its micro-batches
// at GA 1 and 2, a step's losses and parameter gradients over them, and the comparison by
// relative norm ‖a − b‖ / ‖b‖.
#pragma once

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "../model/test_gpt_support.hpp"
#include "model/config_json.hpp"
#include "train/train_step.hpp"

namespace tokbench::train {

inline const torch::Device kCpu(torch::kCPU);
inline constexpr double kTolerance = 1e-5;

inline double relative_error(const torch::Tensor& got, const torch::Tensor& want) {
  return ((got.to(torch::kDouble) - want.to(torch::kDouble)).norm() /
          want.to(torch::kDouble).norm().clamp_min(1e-30))
      .item<double>();
}

inline ::testing::AssertionResult close(const torch::Tensor& got, const torch::Tensor& want, double tolerance = kTolerance) {
  if (!got.defined() || !want.defined())
    return ::testing::AssertionFailure() << "undefined tensor (got " << got.defined() << ", want " << want.defined()
                                         << ")";
  if (got.sizes() != want.sizes())
    return ::testing::AssertionFailure() << "shape " << got.sizes() << " vs " << want.sizes();
  const double error = relative_error(got, want);
  if (error <= tolerance) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "relative error " << error << " > " << tolerance;
}

struct Fixture {
  model::Config config;
  std::map<std::string, torch::Tensor> params;
  torch::Tensor input, targets;
};

inline Fixture load_fixture(const std::string& family) {
  Fixture f;
  const auto dir = model::testing::fixtures_dir() / "model" / "equivalence";
  const auto doc = model::testing::read_json(dir / (family + ".json"));
  const auto tensors = model::testing::read_blob(doc.at("tensors"), dir / (family + ".bin"));
  std::vector<std::string> problems;
  model::config_from_json(doc.at("config"), f.config, problems);
  for (const auto& p : problems) ADD_FAILURE() << family << ": " << p;
  f.config.finalize();
  for (const auto& [name, t] : tensors)
    if (name.rfind("param/", 0) == 0) f.params.emplace(name.substr(6), t);
  f.input = tensors.at("input");
  f.targets = tensors.at("targets");
  return f;
}

inline model::GPT model_of(const Fixture& f) {
  model::GPT gpt(f.config, torch::TensorOptions().dtype(torch::kFloat));
  gpt->load_state(f.params);
  return gpt;
}

// GA micro-batches: the fixture's batch, then the same rolled by one position with a few
// targets ignored, so accumulation and ignore_index both count.
inline std::vector<TokenBatch> micro_batches(const Fixture& f, int64_t grad_accum) {
  std::vector<TokenBatch> batches{{f.input, f.targets}};
  if (grad_accum > 1) {
    auto y = f.targets.roll(1, 1).clone();
    y.select(1, 0).fill_(-1);
    batches.push_back({f.input.roll(1, 1).contiguous(), y});
  }
  return batches;
}

struct StepOutcome {
  std::vector<double> losses;
  std::map<std::string, torch::Tensor> grads;
};

inline StepOutcome run_micro_batches(TrainStep& step, model::GPT& gpt, const std::vector<TokenBatch>& batches) {
  StepOutcome o;
  for (size_t i = 0; i < batches.size(); ++i)
    o.losses.push_back(step.forward_backward(batches[i], static_cast<int64_t>(i), batches.size()).item<double>());
  for (const auto& item : gpt->named_parameters())
    o.grads[item.key()] = item.value().grad().defined() ? item.value().grad().clone() : torch::zeros_like(item.value());
  return o;
}

inline void expect_same(const StepOutcome& got, const StepOutcome& want, double tolerance = kTolerance) {
  ASSERT_EQ(got.losses.size(), want.losses.size());
  for (size_t i = 0; i < got.losses.size(); ++i)
    EXPECT_NEAR(got.losses[i], want.losses[i], tolerance * std::abs(want.losses[i])) << "loss of micro-batch " << i;
  ASSERT_EQ(got.grads.size(), want.grads.size());
  for (const auto& [name, grad] : want.grads) {
    if (grad.abs().max().item<double>() == 0) {  // e.g. an MoE expert that got no token
      EXPECT_EQ(got.grads.at(name).abs().max().item<double>(), 0.0) << "grad of " << name;
      continue;
    }
    EXPECT_TRUE(close(got.grads.at(name), grad, tolerance)) << "grad of " << name;
  }
}

}  // namespace tokbench::train
