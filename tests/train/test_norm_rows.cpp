// The RMSNorm row kernel (rms_norm_rows.hpp) equals the eager model's
// ATen compositions in value and, through autograd, in every gradient: fp32 and bf16, Gemma's
// unit offset, widths that are no multiple of any vector width (and one narrower than a
// vector), non-contiguous inputs, and enough rows that grad_weight is summed in several
// parts. Installed in a GPT of the equivalence fixtures (set_norm_function), it leaves its
// output and parameter gradients unchanged. The same for layer_norm_rows's CPU side (the
// autograd function and backward formula its CUDA kernels share) against torch::layer_norm,
// installed by set_layer_norm_function in the LayerNorm families.
// ctest also runs this file under ATEN_CPU_CAPABILITY=default and avx2, so each ISA's
// kernel is checked. Tolerance: relative norm ‖a − b‖ / ‖b‖.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <map>
#include <string>
#include <vector>

#include "fixture_model.hpp"
#include "row_kernel_references.hpp"
#include "train/layer_norm_rows.hpp"
#include "train/rms_norm_rows.hpp"

namespace tokbench::train {
namespace {

constexpr double kFp32Tolerance = 1e-5;
// bf16 keeps 8 significant bits; the kernels round each result once, as the compositions
// do, so only the rare value whose fp32 sum order differs may round to the other neighbour.
constexpr double kBf16Tolerance = 1e-2;

using testing::relative_error;

using testing::close;

double tolerance_of(torch::ScalarType dtype) { return dtype == torch::kBFloat16 ? kBf16Tolerance : kFp32Tolerance; }

// ---- RMSNorm ------------------------------------------------------------------------------

using testing::aten_rms_norm;

struct NormCase {
  torch::ScalarType dtype;
  std::vector<int64_t> shape;  // (A, B, C); rows A·B of width C
  bool unit_offset = false;
  bool transposed = false;  // the input is x.transpose(0, 1): not contiguous
};

struct NormOutcome {
  torch::Tensor y, grad_x, grad_weight;
};

// y = norm(x, weight) and the gradients of Σ y·g, inputs drawn from a fixed seed.
template <typename Norm>
NormOutcome norm_outcome(const NormCase& c, Norm&& norm) {
  torch::manual_seed(11);
  const int64_t width = c.shape.back();
  auto x = (torch::randn(c.shape) * 2 + 0.5).to(c.dtype).requires_grad_(true);
  auto weight = ((c.unit_offset ? 0 : 1) + torch::randn({width}) * 0.2).to(c.dtype).requires_grad_(true);
  auto input = c.transposed ? x.transpose(0, 1) : x;
  auto g = torch::randn(input.sizes()).to(c.dtype);
  auto y = norm(input, weight);
  (y.to(torch::kFloat) * g.to(torch::kFloat)).sum().backward();
  return {y.detach(), x.grad(), weight.grad()};
}

void expect_norm_equals_aten(const NormCase& c, double eps = 1e-6) {
  const auto got = norm_outcome(c, [&](const auto& x, const auto& w) { return rms_norm_rows(x, w, c.unit_offset, eps); });
  const auto want =
      norm_outcome(c, [&](const auto& x, const auto& w) { return aten_rms_norm(x, w, c.unit_offset, eps); });
  const double tolerance = tolerance_of(c.dtype);
  EXPECT_TRUE(close(got.y, want.y, tolerance)) << "output";
  EXPECT_TRUE(close(got.grad_x, want.grad_x, tolerance)) << "grad x";
  EXPECT_TRUE(close(got.grad_weight, want.grad_weight, tolerance)) << "grad weight";
}

TEST(RmsNormRows, EqualsAtenFp32) { expect_norm_equals_aten({torch::kFloat, {5, 7, 67}}); }
TEST(RmsNormRows, EqualsAtenFp32UnitOffset) { expect_norm_equals_aten({torch::kFloat, {5, 7, 67}, true}); }
TEST(RmsNormRows, EqualsAtenFp32NarrowerThanAVector) { expect_norm_equals_aten({torch::kFloat, {3, 4, 5}}); }
TEST(RmsNormRows, EqualsAtenFp32NotContiguous) {
  expect_norm_equals_aten({torch::kFloat, {6, 5, 40}, false, true});
}
TEST(RmsNormRows, EqualsAtenFp32ManyRows) { expect_norm_equals_aten({torch::kFloat, {64, 67, 96}, true}); }
TEST(RmsNormRows, EqualsAtenFp32LargeEps) { expect_norm_equals_aten({torch::kFloat, {5, 7, 67}}, 0.5); }
TEST(RmsNormRows, EqualsAtenBf16) { expect_norm_equals_aten({torch::kBFloat16, {5, 7, 67}}); }
TEST(RmsNormRows, EqualsAtenBf16UnitOffset) { expect_norm_equals_aten({torch::kBFloat16, {5, 7, 67}, true}); }
TEST(RmsNormRows, EqualsAtenBf16ManyRows) { expect_norm_equals_aten({torch::kBFloat16, {64, 67, 96}, true}); }

// The comparison can fail: the unit offset left out is far beyond the tolerance.
TEST(RmsNormRows, ComparisonDetectsAMissingUnitOffset) {
  const NormCase c{torch::kFloat, {5, 7, 67}, true};
  const auto got = norm_outcome(c, [](const auto& x, const auto& w) { return rms_norm_rows(x, w, false, 1e-6); });
  const auto want = norm_outcome(c, [](const auto& x, const auto& w) { return aten_rms_norm(x, w, true, 1e-6); });
  EXPECT_FALSE(close(got.y, want.y, kFp32Tolerance));
  EXPECT_FALSE(close(got.grad_x, want.grad_x, kFp32Tolerance));
}

// grad_weight is summed in parts fixed by the row and thread counts: the same bits each time.
TEST(RmsNormRows, WeightGradientIsDeterministic) {
  const NormCase c{torch::kFloat, {64, 67, 96}};
  const auto norm = [](const auto& x, const auto& w) { return rms_norm_rows(x, w, false, 1e-6); };
  const auto first = norm_outcome(c, norm);
  const auto second = norm_outcome(c, norm);
  EXPECT_TRUE(torch::equal(first.grad_weight, second.grad_weight));
  EXPECT_TRUE(torch::equal(first.grad_x, second.grad_x));
}

TEST(RmsNormRows, FrozenWeightGetsNoGradient) {
  torch::manual_seed(2);
  auto x = torch::randn({9, 33}).requires_grad_(true);
  const auto weight = torch::randn({33});
  rms_norm_rows(x, weight, false, 1e-6).sum().backward();
  EXPECT_FALSE(weight.grad().defined());
  auto x_ref = x.detach().clone().requires_grad_(true);
  aten_rms_norm(x_ref, weight, false, 1e-6).sum().backward();
  EXPECT_TRUE(close(x.grad(), x_ref.grad(), kFp32Tolerance));
}

// ---- LayerNorm (layer_norm_rows's CPU side) --------------------------------------------

using testing::aten_layer_norm;

struct LayerNormOutcome {
  torch::Tensor y, grad_x, grad_weight, grad_bias;
};

// y = norm(x, weight, bias) and the gradients of Σ y·g, inputs drawn from a fixed seed (x
// centred on 3, so leaving out the mean shows).
template <typename Norm>
LayerNormOutcome layer_norm_outcome(const NormCase& c, Norm&& norm) {
  torch::manual_seed(13);
  const int64_t width = c.shape.back();
  auto x = (torch::randn(c.shape) * 2 + 3).to(c.dtype).requires_grad_(true);
  auto weight = (1 + torch::randn({width}) * 0.2).to(c.dtype).requires_grad_(true);
  auto bias = (torch::randn({width}) * 0.1).to(c.dtype).requires_grad_(true);
  auto input = c.transposed ? x.transpose(0, 1) : x;
  auto g = torch::randn(input.sizes()).to(c.dtype);
  auto y = norm(input, weight, bias);
  (y.to(torch::kFloat) * g.to(torch::kFloat)).sum().backward();
  return {y.detach(), x.grad(), weight.grad(), bias.grad()};
}

void expect_layer_norm_equals_aten(const NormCase& c, double eps = 1e-5) {
  const auto got = layer_norm_outcome(
      c, [&](const auto& x, const auto& w, const auto& b) { return layer_norm_rows(x, w, b, eps); });
  const auto want = layer_norm_outcome(
      c, [&](const auto& x, const auto& w, const auto& b) { return aten_layer_norm(x, w, b, eps); });
  const double tolerance = tolerance_of(c.dtype);
  EXPECT_TRUE(close(got.y, want.y, tolerance)) << "output";
  EXPECT_TRUE(close(got.grad_x, want.grad_x, tolerance)) << "grad x";
  EXPECT_TRUE(close(got.grad_weight, want.grad_weight, tolerance)) << "grad weight";
  EXPECT_TRUE(close(got.grad_bias, want.grad_bias, tolerance)) << "grad bias";
}

TEST(LayerNormRows, EqualsAtenFp32) { expect_layer_norm_equals_aten({torch::kFloat, {5, 7, 67}}); }
TEST(LayerNormRows, EqualsAtenFp32Narrow) { expect_layer_norm_equals_aten({torch::kFloat, {3, 4, 5}}); }
TEST(LayerNormRows, EqualsAtenFp32NotContiguous) {
  expect_layer_norm_equals_aten({torch::kFloat, {6, 5, 40}, false, true});
}
TEST(LayerNormRows, EqualsAtenFp32ManyRows) { expect_layer_norm_equals_aten({torch::kFloat, {64, 67, 96}}); }
TEST(LayerNormRows, EqualsAtenFp32LargeEps) { expect_layer_norm_equals_aten({torch::kFloat, {5, 7, 67}}, 0.5); }
TEST(LayerNormRows, EqualsAtenBf16) { expect_layer_norm_equals_aten({torch::kBFloat16, {5, 7, 67}}); }
TEST(LayerNormRows, EqualsAtenBf16ManyRows) { expect_layer_norm_equals_aten({torch::kBFloat16, {64, 67, 96}}); }

// The comparison can fail: the mean left in (an RMSNorm with a bias) is far beyond the tolerance.
TEST(LayerNormRows, ComparisonDetectsAMissingMean) {
  const NormCase c{torch::kFloat, {5, 7, 67}};
  const auto got = layer_norm_outcome(c, [](const auto& x, const auto& w, const auto& b) {
    return testing::aten_rms_norm(x, w, false, 1e-5) + b;
  });
  const auto want = layer_norm_outcome(
      c, [](const auto& x, const auto& w, const auto& b) { return aten_layer_norm(x, w, b, 1e-5); });
  EXPECT_FALSE(close(got.y, want.y, kFp32Tolerance));
  EXPECT_FALSE(close(got.grad_x, want.grad_x, kFp32Tolerance));
}

TEST(LayerNormRows, FrozenParametersGetNoGradient) {
  torch::manual_seed(2);
  auto x = torch::randn({9, 33}).requires_grad_(true);
  const auto weight = torch::randn({33});
  const auto bias = torch::randn({33});
  layer_norm_rows(x, weight, bias, 1e-5).sum().backward();
  EXPECT_FALSE(weight.grad().defined());
  EXPECT_FALSE(bias.grad().defined());
  auto x_ref = x.detach().clone().requires_grad_(true);
  aten_layer_norm(x_ref, weight, bias, 1e-5).sum().backward();
  EXPECT_TRUE(close(x.grad(), x_ref.grad(), kFp32Tolerance));
}

TEST(LayerNormRows, RefusesBadArguments) {
  const auto x = torch::randn({4, 8});
  EXPECT_THROW(layer_norm_rows(x, torch::ones({8}), torch::Tensor(), 1e-5), c10::Error);            // no bias
  EXPECT_THROW(layer_norm_rows(x, torch::ones({7}), torch::zeros({7}), 1e-5), c10::Error);          // width
  EXPECT_THROW(layer_norm_rows(x, torch::ones({8}), torch::zeros({9}), 1e-5), c10::Error);          // bias shape
  EXPECT_THROW(layer_norm_rows(x.to(torch::kDouble), torch::ones({8}), torch::zeros({8}), 1e-5), c10::Error);
}

// ---- in the model: hooks installed, output and gradients unchanged -------------------------

struct ModelOutcome {
  torch::Tensor hidden;
  std::map<std::string, torch::Tensor> grads;
  int norm_calls = 0;
};

// forward_hidden on the fixture's input and the gradients of Σ hidden·g, fp32; with
// rms_norm_rows as the model's RMSNorm function and layer_norm_rows as its LayerNorm function
// when `row_kernels`, counting the calls.
ModelOutcome model_outcome(const std::string& family, bool row_kernels) {
  auto fixture = testing::fixture_model(family, torch::kFloat, torch::kCPU);
  auto& gpt = fixture.gpt;
  ModelOutcome o;
  if (row_kernels) {
    gpt->set_norm_function([&o](const torch::Tensor& x, const torch::Tensor& w, bool unit_offset, double eps) {
      ++o.norm_calls;
      return rms_norm_rows(x, w, unit_offset, eps);
    });
    gpt->set_layer_norm_function([&o](const torch::Tensor& x, const torch::Tensor& w, const torch::Tensor& b,
                                      double eps) {
      ++o.norm_calls;
      return layer_norm_rows(x, w, b, eps);
    });
  }
  o.hidden = gpt->forward_hidden(fixture.input);
  torch::manual_seed(5);
  (o.hidden * torch::randn(o.hidden.sizes())).sum().backward();
  for (const auto& item : gpt->named_parameters())
    o.grads[item.key()] = item.value().grad().defined() ? item.value().grad().clone() : torch::zeros_like(item.value());
  o.hidden = o.hidden.detach();
  return o;
}

class RowKernelsInModel : public ::testing::TestWithParam<std::string> {};

TEST_P(RowKernelsInModel, LeaveOutputAndGradientsUnchanged) {
  const auto got = model_outcome(GetParam(), true);
  const auto want = model_outcome(GetParam(), false);
  EXPECT_GT(got.norm_calls, 0) << "no norm went through the hooks";
  EXPECT_TRUE(close(got.hidden, want.hidden, kFp32Tolerance)) << "hidden";
  ASSERT_EQ(got.grads.size(), want.grads.size());
  for (const auto& [name, grad] : want.grads) {
    if (grad.abs().max().item<double>() == 0) {  // e.g. an MoE expert that got no token
      EXPECT_EQ(got.grads.at(name).abs().max().item<double>(), 0.0) << "grad of " << name;
      continue;
    }
    EXPECT_TRUE(close(got.grads.at(name), grad, kFp32Tolerance)) << "grad of " << name;
  }
}

// qwen3: LLaMAMLP and q/k norms per head; gemma-3: unit offset, GemmaMLP (gate left on
// ATen); olmo-2: q/k norms over all heads; mixtral: LLaMAMoE experts; pythia: LayerNorm,
// parallel residual; phi-2: LayerNorm shared by attention and MLP; falcon: LayerNorm.
INSTANTIATE_TEST_SUITE_P(Families, RowKernelsInModel,
                         ::testing::Values("qwen3", "gemma-3", "olmo-2", "mixtral", "pythia", "phi-2", "falcon"),
                         [](const auto& info) { return model::testing::test_name(info.param); });

}  // namespace
}  // namespace tokbench::train
