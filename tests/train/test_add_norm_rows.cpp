// The residual add fused into RMSNorm (add_norm_rows.hpp), its CPU side (the ATen operators the
// CUDA kernels' autograd function runs on CPU tensors): both outputs and, through autograd, the
// gradients of a, x and the weight equal the unfused `a + x` then RMSNorm (add_norm_references.hpp),
// fp32 and bf16, Gemma's unit offset, non-contiguous inputs; bad inputs refused; and installed in
// GPT fixture models (set_add_norm_function), one call per sequential block, the model's output
// and every parameter gradient unchanged. Part of test_norm_rows. Tolerance: relative norm.
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
  const auto got = testing::add_norm_outcome(c, torch::kCPU, [&](const auto& a, const auto& x, const auto& w) {
    return add_rms_norm_rows(a, x, w, c.unit_offset, c.eps);
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
  const auto got = testing::add_norm_outcome(c, torch::kCPU, [&](const auto& a, const auto& x, const auto& w) {
    return add_rms_norm_rows(a, x, w, false, c.eps);
  });
  const auto without_residual =
      testing::add_norm_outcome(c, torch::kCPU, [&](const auto& a, const auto& x, const auto& w) {
        auto s = a + x;
        return std::make_pair(s.detach(), testing::aten_rms_norm(s, w, false, c.eps));
      });
  EXPECT_FALSE(close(got.grad_a, without_residual.grad_a, kFp32Tolerance));
  const auto offset = testing::add_norm_outcome(c, torch::kCPU, [&](const auto& a, const auto& x, const auto& w) {
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

// ---- installed in fixture models ---------------------------------------------------------

class AddNormInModel : public ::testing::TestWithParam<std::string> {};

TEST_P(AddNormInModel, OnePerBlockOutputAndGradientsUnchanged) {
  const auto [got, calls] = testing::add_norm_model_outcome(GetParam(), torch::kCPU, true);
  const auto want = testing::add_norm_model_outcome(GetParam(), torch::kCPU, false).first;
  const auto fixture = testing::fixture_model(GetParam(), torch::kFloat, torch::kCPU);
  EXPECT_EQ(calls, fixture.gpt->config().n_layer) << "one fused add and norm_2 per sequential block";
  EXPECT_TRUE(close(got.hidden, want.hidden, kFp32Tolerance)) << "hidden";
  ASSERT_EQ(got.grads.size(), want.grads.size());
  for (const auto& [name, grad] : want.grads) EXPECT_TRUE(close(got.grads.at(name), grad, kFp32Tolerance)) << "grad of " << name;
}

// llama-3.1: the target's family (Llama-3.2-1B); gemma-3: unit offset, with the post-attention
// norm before the add (the fused add takes its output as the branch).
INSTANTIATE_TEST_SUITE_P(Families, AddNormInModel, ::testing::Values("llama-3.1", "gemma-3"),
                         [](const auto& info) { return model::testing::test_name(info.param); });

}  // namespace
}  // namespace tokbench::train
