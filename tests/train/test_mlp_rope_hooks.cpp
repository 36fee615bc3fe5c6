// The host side of the gated MLP activation and rotary embedding kernels, on the CPU: their
// entry points (gated_activation, rope_rotation) refuse CPU tensors, mismatched shapes and
// other dtypes with a message naming what was wrong, before any launch; and the model's hooks
// the fused executor installs on CUDA (set_gate_function, set_rope_function) see every gated
// MLP and attention layer with the arguments the kernels expect, and leave output and
// gradients bit for bit unchanged when the hook computes the eager composition. The kernels
// themselves are compared on a GPU (test_mlp_rope_cuda.cpp).
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <map>
#include <ostream>
#include <set>
#include <string>
#include <vector>

#include "mlp_rope_references.hpp"
#include "train/gated_activation.hpp"
#include "train/rope_rotation.hpp"

namespace tokbench::train {
namespace {

using model::GateActivation;

// Runs `call`, expecting a c10::Error whose message contains `part`.
template <typename Call>
::testing::AssertionResult refuses(Call&& call, const std::string& part) {
  try {
    call();
  } catch (const c10::Error& e) {
    const std::string message = e.what_without_backtrace();
    if (message.find(part) != std::string::npos) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << "message without '" << part << "': " << message;
  }
  return ::testing::AssertionFailure() << "no error";
}

TEST(GatedActivationHost, RefusesCpuTensors) {
  const auto gate = torch::randn({2, 8}), up = torch::randn({2, 8});
  EXPECT_TRUE(refuses([&] { gated_activation(gate, up, GateActivation::silu); }, "on one CUDA device expected"));
}

TEST(GatedActivationHost, RefusesMismatchedShapesAndDtypes) {
  EXPECT_TRUE(refuses([] { gated_activation(torch::randn({2, 8}), torch::randn({2, 9}), GateActivation::silu); },
                      "differ in shape"));
  EXPECT_TRUE(refuses(
      [] { gated_activation(torch::randn({2, 8}), torch::randn({2, 8}).to(torch::kBFloat16), GateActivation::gelu); },
      "of one dtype"));
  EXPECT_TRUE(refuses(
      [] { gated_activation(torch::randn({2, 8}).to(torch::kHalf), torch::randn({2, 8}).to(torch::kHalf),
                            GateActivation::gelu_tanh); },
      "fp32 or bf16"));
}

TEST(RopeRotationHost, RefusesCpuTensors) {
  const auto x = torch::randn({1, 2, 5, 8}), cos = torch::randn({1, 5, 8}), sin = torch::randn({1, 5, 8});
  EXPECT_TRUE(refuses([&] { rope_rotation(x, cos, sin); }, "on one CUDA device expected"));
}

TEST(RopeRotationHost, RefusesShapesTheKernelCannotRotate) {
  const auto x = torch::randn({1, 2, 5, 8});
  EXPECT_TRUE(refuses([&] { rope_rotation(x.view({2, 5, 8}), torch::randn({1, 5, 8}), torch::randn({1, 5, 8})); },
                      "(B, H, T, D) expected"));
  EXPECT_TRUE(refuses([&] { rope_rotation(x, torch::randn({1, 4, 8}), torch::randn({1, 4, 8})); }, "4 positions"));
  EXPECT_TRUE(refuses([&] { rope_rotation(x, torch::randn({1, 5, 3}), torch::randn({1, 5, 3})); }, "must be even"));
  EXPECT_TRUE(refuses([&] { rope_rotation(x, torch::randn({1, 5, 10}), torch::randn({1, 5, 10})); }, "must be even"));
  EXPECT_TRUE(refuses([&] { rope_rotation(x, torch::randn({1, 5, 8}), torch::randn({1, 5, 6})); }, "of one shape"));
  EXPECT_TRUE(refuses([&] { rope_rotation(x.to(torch::kHalf), torch::randn({1, 5, 8}), torch::randn({1, 5, 8})); },
                      "fp32 or bf16"));
}

// ---- in the model: the hooks' calls, output and gradients unchanged ----------------------

struct HookedOutcome {
  torch::Tensor hidden;
  std::map<std::string, torch::Tensor> grads;
  std::set<GateActivation> activations;  // the gate calls' activations
  int gate_calls = 0, rope_calls = 0;
  int64_t layers = 0;
  bool rope_shapes_as_documented = true;  // x (B, H, T, D), cos/sin (1, T, n ≤ D)
};

// forward_hidden on the fixture's input and the gradients of Σ hidden·g, fp32 on the CPU, with
// hooks that compute the eager composition and count their calls (or no hooks).
HookedOutcome hooked_outcome(const std::string& family, bool hooks) {
  auto fixture = testing::fixture_model(family, torch::kFloat, torch::kCPU);
  HookedOutcome o;
  o.layers = fixture.gpt->config().n_layer;
  if (hooks) {
    fixture.gpt->set_gate_function([&o](const torch::Tensor& gate, const torch::Tensor& up, GateActivation act) {
      ++o.gate_calls;
      o.activations.insert(act);
      return testing::aten_gated_activation(gate, up, act);
    });
    fixture.gpt->set_rope_function([&o](const torch::Tensor& x, const torch::Tensor& cos, const torch::Tensor& sin) {
      ++o.rope_calls;
      o.rope_shapes_as_documented = o.rope_shapes_as_documented && x.dim() == 4 && cos.dim() == 3 &&
                                    cos.size(0) == 1 && cos.size(1) == x.size(2) && cos.size(2) <= x.size(3) &&
                                    sin.sizes() == cos.sizes();
      return testing::aten_rope(x, cos, sin);
    });
  }
  o.hidden = fixture.gpt->forward_hidden(fixture.input);
  torch::manual_seed(5);
  (o.hidden * torch::randn(o.hidden.sizes())).sum().backward();
  for (const auto& item : fixture.gpt->named_parameters())
    o.grads[item.key()] = item.value().grad().defined() ? item.value().grad().clone() : torch::zeros_like(item.value());
  o.hidden = o.hidden.detach();
  return o;
}

struct HookCase {
  std::string family;
  std::set<GateActivation> activations;  // empty: no gated MLP (GptNeoxMLP keeps torch::gelu)
};

// Named by family in test names (gtest prints a struct's bytes otherwise).
void PrintTo(const HookCase& c, std::ostream* os) { *os << c.family; }

class MlpRopeHooksInModel : public ::testing::TestWithParam<HookCase> {};

TEST_P(MlpRopeHooksInModel, SeeEveryLayerAndLeaveOutputAndGradientsUnchanged) {
  const auto& c = GetParam();
  const auto got = hooked_outcome(c.family, true);
  const auto want = hooked_outcome(c.family, false);
  const auto layers = static_cast<int>(got.layers);
  ASSERT_GT(layers, 0);
  EXPECT_EQ(got.rope_calls, 2 * layers) << "q and k of every layer";
  EXPECT_TRUE(got.rope_shapes_as_documented);
  EXPECT_EQ(got.activations, c.activations);
  if (c.activations.empty()) EXPECT_EQ(got.gate_calls, 0);
  else EXPECT_GE(got.gate_calls, layers);
  EXPECT_TRUE(torch::equal(got.hidden, want.hidden)) << "hidden";
  ASSERT_EQ(got.grads.size(), want.grads.size());
  for (const auto& [name, grad] : want.grads) EXPECT_TRUE(torch::equal(got.grads.at(name), grad)) << "grad of " << name;
}

// qwen3: LLaMAMLP (silu); gemma-3: GemmaMLP (tanh GELU) and per-layer global/local rope tables;
// phi-2 and pythia: partial rotary (rope_n_elem < head_size) and GptNeoxMLP (no gate);
// mixtral: LLaMAMoE's experts (some of which may get no token).
INSTANTIATE_TEST_SUITE_P(Families, MlpRopeHooksInModel,
                         ::testing::Values(HookCase{"qwen3", {GateActivation::silu}},
                                           HookCase{"gemma-3", {GateActivation::gelu_tanh}},
                                           HookCase{"phi-2", {}}, HookCase{"pythia", {}},
                                           HookCase{"mixtral", {GateActivation::silu}}),
                         [](const auto& info) { return model::testing::test_name(info.param.family); });

}  // namespace
}  // namespace tokbench::train
