// The residual add fused into RMSNorm and LayerNorm (add_norm_rows.hpp), its CPU side (the ATen
// operators the CUDA kernels' autograd functions run on CPU tensors): both outputs and, through
// autograd, the gradients of a, x, weight and bias equal the unfused `a + x` then the norm
// (add_norm_references.hpp), fp32 and bf16, Gemma's unit offset, LayerNorm with and without
// parameters, non-contiguous inputs; bad inputs refused; and installed in GPT fixture models
// (set_add_norm_function, set_add_layer_norm_function), every add that feeds a norm fused
// (sequential and parallel-residual blocks), the model's output and every parameter gradient
// unchanged. Part of test_norm_rows. Tolerance: relative norm.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <string>
#include <utility>

#include "add_norm_references.hpp"
#include "fixture_model.hpp"
#include "row_kernel_references.hpp"
#include "train/add_norm_rows.hpp"
#include "train/rms_norm_rows.hpp"

namespace tokbench::train {
namespace {

constexpr double kFp32Tolerance = 1e-5;
// bf16 keeps 8 significant bits; a value whose fp32 sums ran in another order may round to
// the other neighbour.
constexpr double kBf16Tolerance = 1e-2;

using testing::AddNormCase;
using testing::close;

void expect_fused_equals_unfused(const AddNormCase& c) {
  const auto got = testing::add_norm_outcome(c, torch::kCPU, [&](const auto& a, const auto& x, const auto& w,
                                                                 const auto& b) {
    return c.kind == testing::AddNormKind::rms ? add_rms_norm_rows(a, x, w, c.unit_offset, c.eps)
                                               : add_layer_norm_rows(a, x, w, b, c.eps);
  });
  testing::expect_add_norm_close(got, testing::unfused_add_norm_outcome(c),
                                 c.dtype == torch::kBFloat16 ? kBf16Tolerance : kFp32Tolerance);
  // One tensor is the gradient of both a and x, as ATen's add backward passes one.
  EXPECT_TRUE(torch::equal(got.grad_a, got.grad_x));
}

TEST(AddRmsNormRows, EqualsUnfusedFp32) { expect_fused_equals_unfused({torch::kFloat, {5, 7, 67}}); }
TEST(AddRmsNormRows, EqualsUnfusedFp32UnitOffset) { expect_fused_equals_unfused({torch::kFloat, {5, 7, 67}, true}); }
TEST(AddRmsNormRows, EqualsUnfusedFp32NotContiguous) {
  expect_fused_equals_unfused({torch::kFloat, {6, 5, 40}, false, true});
}
TEST(AddRmsNormRows, EqualsUnfusedFp32LargeEps) {
  expect_fused_equals_unfused({torch::kFloat, {5, 7, 67}, false, false, 0.5});
}
TEST(AddRmsNormRows, EqualsUnfusedBf16) { expect_fused_equals_unfused({torch::kBFloat16, {5, 7, 67}}); }
TEST(AddRmsNormRows, EqualsUnfusedBf16UnitOffset) { expect_fused_equals_unfused({torch::kBFloat16, {5, 7, 67}, true}); }
TEST(AddRmsNormRows, EqualsUnfusedBf16NotContiguous) {
  expect_fused_equals_unfused({torch::kBFloat16, {6, 5, 40}, false, true});
}

// The sum is the add's own, bit for bit: rounded once to bf16 as ATen's add rounds it.
TEST(AddRmsNormRows, SumIsTheAddsBf16Rounding) {
  torch::manual_seed(3);
  const auto a = torch::randn({4, 33}).to(torch::kBFloat16);
  const auto x = (torch::randn({4, 33}) * 100).to(torch::kBFloat16);
  const auto [sum, y] = add_rms_norm_rows(a, x, torch::ones({33}, torch::kBFloat16), false, 1e-6);
  EXPECT_TRUE(torch::equal(sum, a + x));
  EXPECT_TRUE(close(y, testing::aten_rms_norm(a + x, torch::ones({33}, torch::kBFloat16), false, 1e-6), kBf16Tolerance));
}

// The comparison can fail: a reference whose sum gets no gradient from the residual path (the
// addend backward must add) is far from the fused gradients, and so is a wrong unit offset.
TEST(AddRmsNormRows, ComparisonDetectsAMissingResidualGradient) {
  const AddNormCase c{torch::kFloat, {5, 7, 67}};
  const auto got = testing::add_norm_outcome(c, torch::kCPU, [&](const auto& a, const auto& x, const auto& w, const auto&) {
    return add_rms_norm_rows(a, x, w, false, c.eps);
  });
  const auto without_residual =
      testing::add_norm_outcome(c, torch::kCPU, [&](const auto& a, const auto& x, const auto& w, const auto&) {
        auto s = a + x;
        return std::make_pair(s.detach(), testing::aten_rms_norm(s, w, false, c.eps));
      });
  EXPECT_FALSE(close(got.grad_a, without_residual.grad_a, kFp32Tolerance));
  const auto offset = testing::add_norm_outcome(c, torch::kCPU, [&](const auto& a, const auto& x, const auto& w, const auto&) {
    return add_rms_norm_rows(a, x, w, true, c.eps);
  });
  EXPECT_FALSE(close(offset.y, got.y, kFp32Tolerance));
}

TEST(AddRmsNormRows, RefusesMismatchedInputs) {
  const auto w = torch::ones({8});
  EXPECT_THROW(add_rms_norm_rows(torch::zeros({2, 8}), torch::zeros({2, 8}, torch::kBFloat16), w, false, 1e-6),
               c10::Error);
  EXPECT_THROW(add_rms_norm_rows(torch::zeros({3, 8}), torch::zeros({2, 8}), w, false, 1e-6), c10::Error);
  EXPECT_THROW(add_rms_norm_rows(torch::zeros({2, 7}), torch::zeros({2, 7}), w, false, 1e-6), c10::Error);
  EXPECT_THROW(add_rms_norm_rows(torch::zeros({2, 8}, torch::kDouble), torch::zeros({2, 8}, torch::kDouble), w,
                                 false, 1e-6),
               c10::Error);
}

// ---- LayerNorm ------------------------------------------------------------------------------

constexpr auto kLayer = testing::AddNormKind::layer;
constexpr auto kNoAffine = testing::AddNormKind::layer_no_affine;

TEST(AddLayerNormRows, EqualsUnfusedFp32) { expect_fused_equals_unfused({torch::kFloat, {5, 7, 67}, false, false, 1e-5, kLayer}); }
TEST(AddLayerNormRows, EqualsUnfusedFp32NoParameters) {
  expect_fused_equals_unfused({torch::kFloat, {5, 7, 67}, false, false, 1e-5, kNoAffine});
}
TEST(AddLayerNormRows, EqualsUnfusedFp32NotContiguous) {
  expect_fused_equals_unfused({torch::kFloat, {6, 5, 40}, false, true, 1e-5, kLayer});
}
TEST(AddLayerNormRows, EqualsUnfusedFp32LargeEps) {
  expect_fused_equals_unfused({torch::kFloat, {5, 7, 67}, false, false, 0.5, kLayer});
}
TEST(AddLayerNormRows, EqualsUnfusedBf16) { expect_fused_equals_unfused({torch::kBFloat16, {5, 7, 67}, false, false, 1e-5, kLayer}); }
TEST(AddLayerNormRows, EqualsUnfusedBf16NoParametersNotContiguous) {
  expect_fused_equals_unfused({torch::kBFloat16, {6, 5, 40}, false, true, 1e-5, kNoAffine});
}

// The sum is the add's own, bit for bit (bf16), and the norm torch::layer_norm's of it.
TEST(AddLayerNormRows, SumIsTheAddsBf16Rounding) {
  torch::manual_seed(3);
  const auto a = torch::randn({4, 33}).to(torch::kBFloat16);
  const auto x = (torch::randn({4, 33}) * 100).to(torch::kBFloat16);
  const auto w = (1 + torch::randn({33}) * 0.2).to(torch::kBFloat16);
  const auto b = torch::randn({33}).to(torch::kBFloat16);
  const auto [sum, y] = add_layer_norm_rows(a, x, w, b, 1e-5);
  EXPECT_TRUE(torch::equal(sum, a + x));
  EXPECT_TRUE(close(y, testing::aten_layer_norm(a + x, w, b, 1e-5), kBf16Tolerance));
}

// The comparison can fail: a reference whose sum gets no gradient from the residual path is far
// from the fused gradients; a missing bias moves the norm.
TEST(AddLayerNormRows, ComparisonDetectsAMissingResidualGradientOrBias) {
  const AddNormCase c{torch::kFloat, {5, 7, 67}, false, false, 1e-5, kLayer};
  const auto got = testing::add_norm_outcome(c, torch::kCPU, [&](const auto& a, const auto& x, const auto& w,
                                                                 const auto& b) {
    return add_layer_norm_rows(a, x, w, b, c.eps);
  });
  const auto without_residual =
      testing::add_norm_outcome(c, torch::kCPU, [&](const auto& a, const auto& x, const auto& w, const auto& b) {
        auto s = a + x;
        return std::make_pair(s.detach(), torch::layer_norm(s, {s.size(-1)}, w, b, c.eps));
      });
  EXPECT_FALSE(close(got.grad_a, without_residual.grad_a, kFp32Tolerance));
  const auto without_bias =
      testing::add_norm_outcome(c, torch::kCPU, [&](const auto& a, const auto& x, const auto& w, const auto&) {
        return add_layer_norm_rows(a, x, w, torch::Tensor(), c.eps);
      });
  EXPECT_FALSE(close(without_bias.y, got.y, kFp32Tolerance));
}

TEST(AddLayerNormRows, RefusesMismatchedInputs) {
  const auto w = torch::ones({8}), b = torch::zeros({8});
  EXPECT_THROW(add_layer_norm_rows(torch::zeros({2, 8}), torch::zeros({2, 8}, torch::kBFloat16), w, b, 1e-5),
               c10::Error);
  EXPECT_THROW(add_layer_norm_rows(torch::zeros({3, 8}), torch::zeros({2, 8}), w, b, 1e-5), c10::Error);
  EXPECT_THROW(add_layer_norm_rows(torch::zeros({2, 7}), torch::zeros({2, 7}), w, b, 1e-5), c10::Error);
  EXPECT_THROW(add_layer_norm_rows(torch::zeros({2, 8}), torch::zeros({2, 8}), w, torch::zeros({7}), 1e-5),
               c10::Error);
  EXPECT_THROW(add_layer_norm_rows(torch::zeros({2, 8}, torch::kDouble), torch::zeros({2, 8}, torch::kDouble), w, b,
                                   1e-5),
               c10::Error);
}

// ---- installed in fixture models ---------------------------------------------------------

class AddNormInModel : public ::testing::TestWithParam<std::string> {};

TEST_P(AddNormInModel, EveryAddBeforeANormFusedOutputAndGradientsUnchanged) {
  const auto [got, calls] = testing::add_norm_model_outcome(GetParam(), torch::kCPU, true);
  const auto want = testing::add_norm_model_outcome(GetParam(), torch::kCPU, false).first;
  const auto fixture = testing::fixture_model(GetParam(), torch::kFloat, torch::kCPU);
  EXPECT_EQ(calls, testing::expected_fused_adds(fixture.gpt->config()))
      << "each block's closing add with the next norm_1 or ln_f, and a sequential block's norm_2";
  EXPECT_TRUE(close(got.hidden, want.hidden, kFp32Tolerance)) << "hidden";
  ASSERT_EQ(got.grads.size(), want.grads.size());
  for (const auto& [name, grad] : want.grads) EXPECT_TRUE(close(got.grads.at(name), grad, kFp32Tolerance)) << "grad of " << name;
}

// llama-3.1: the target's family (Llama-3.2-1B); gemma-3: unit offset, with the post-attention
// and post-MLP norms before the adds (the fused adds take their outputs as the branch); pythia:
// parallel residual, LayerNorm, a norm_2 of its own; phi-2 and falcon: parallel residual with
// the attention norm shared; olmo: sequential, LayerNorm without parameters.
INSTANTIATE_TEST_SUITE_P(Families, AddNormInModel,
                         ::testing::Values("llama-3.1", "gemma-3", "pythia", "phi-2", "falcon", "olmo"),
                         [](const auto& info) { return model::testing::test_name(info.param); });

// Under activation checkpointing a block's closing add stays litgpt's (a recomputation would
// hand its norm over again): no call, the output unchanged; without it, one call per block.
TEST(AddNormHandOver, NoneUnderCheckpointing) {
  auto fixture = testing::fixture_model("pythia", torch::kFloat, torch::kCPU);
  const auto want = fixture.gpt->forward_hidden(fixture.input).detach();
  int calls = 0;
  fixture.gpt->set_add_layer_norm_function([&calls](const torch::Tensor& a, const torch::Tensor& x,
                                                    const torch::Tensor& w, const torch::Tensor& b, double eps) {
    ++calls;
    return add_layer_norm_rows(a, x, w, b, eps);
  });
  fixture.gpt->set_activation_checkpointing(true);
  const auto got = fixture.gpt->forward_hidden(fixture.input).detach();
  EXPECT_EQ(calls, 0) << "pythia's adds are all closing adds: none fused under checkpointing";
  EXPECT_TRUE(close(got, want, kFp32Tolerance));
  fixture.gpt->set_activation_checkpointing(false);
  const auto fused = fixture.gpt->forward_hidden(fixture.input).detach();
  EXPECT_EQ(calls, fixture.gpt->config().n_layer) << "one closing add per block without checkpointing";
  EXPECT_TRUE(close(fused, want, kFp32Tolerance));
}

}  // namespace
}  // namespace tokbench::train
