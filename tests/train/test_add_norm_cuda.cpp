// The CUDA kernels of the residual add fused into RMSNorm and LayerNorm (cuda/rms_norm_kernels.cu's
// add_rms_norm_*, cuda/layer_norm_kernels.cu's add_layer_norm_*, through add_rms_norm_rows and
// add_layer_norm_rows on CUDA tensors) against the unfused `a + x` then the eager model's norm
// run on the CPU (add_norm_references.hpp): the sum, the norm and the gradients of a, x, weight
// and bias, fp32 and bf16, Gemma's unit offset, LayerNorm with and without parameters, widths
// below a warp, odd widths and one wide enough for 512 threads, a non-contiguous input, more
// rows than backward's parts, and the same bits twice; and the llama, gemma, pythia, phi-2,
// falcon and olmo fixture models with the fused adds installed on CUDA against the same models
// on the CPU. ctest label `gpu` (one ctest,
// cuda_kernels): where no CUDA device is present every case is skipped, saying so.
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
constexpr double kBf16Tolerance = 1e-2;  // 8 significant bits; a different sum order may round a value the other way

using testing::AddNormCase;
using testing::close;

bool have_cuda() { return torch::cuda::is_available(); }
#define REQUIRE_CUDA() \
  if (!have_cuda()) GTEST_SKIP() << "no CUDA device here: the CUDA kernels run in scripts/gpu-acceptance"

const torch::Device kCuda(torch::kCUDA, 0);

testing::AddNormOutcome fused_outcome(const AddNormCase& c, const torch::Device& device) {
  return testing::add_norm_outcome(c, device, [&](const auto& a, const auto& x, const auto& w, const auto& b) {
    return c.kind == testing::AddNormKind::rms ? add_rms_norm_rows(a, x, w, c.unit_offset, c.eps)
                                               : add_layer_norm_rows(a, x, w, b, c.eps);
  });
}

void expect_cuda_equals_unfused(const AddNormCase& c) {
  const auto got = fused_outcome(c, kCuda);
  testing::expect_add_norm_close(got, testing::unfused_add_norm_outcome(c),
                                 c.dtype == torch::kBFloat16 ? kBf16Tolerance : kFp32Tolerance);
  // The sum is the add's own rounding, bit for bit, on either device.
  EXPECT_TRUE(torch::equal(got.sum, testing::unfused_add_norm_outcome(c).sum)) << "sum bits";
  EXPECT_TRUE(torch::equal(got.grad_a, got.grad_x)) << "one gradient for a and x";
}

TEST(AddRmsNormCuda, EqualsUnfusedFp32) { REQUIRE_CUDA(); expect_cuda_equals_unfused({torch::kFloat, {5, 7, 67}}); }
TEST(AddRmsNormCuda, EqualsUnfusedFp32UnitOffset) {
  REQUIRE_CUDA();
  expect_cuda_equals_unfused({torch::kFloat, {5, 7, 67}, true});
}
TEST(AddRmsNormCuda, EqualsUnfusedFp32NarrowerThanAWarp) {
  REQUIRE_CUDA();
  expect_cuda_equals_unfused({torch::kFloat, {3, 4, 5}});
}
TEST(AddRmsNormCuda, EqualsUnfusedFp32Wide) {  // 512 threads per block
  REQUIRE_CUDA();
  expect_cuda_equals_unfused({torch::kFloat, {4, 8, 4100}});
}
TEST(AddRmsNormCuda, EqualsUnfusedFp32NotContiguous) {
  REQUIRE_CUDA();
  expect_cuda_equals_unfused({torch::kFloat, {6, 5, 40}, false, true});
}
TEST(AddRmsNormCuda, EqualsUnfusedFp32ManyRows) {  // more rows than backward's parts on any GPU
  REQUIRE_CUDA();
  expect_cuda_equals_unfused({torch::kFloat, {64, 300, 96}, true});
}
TEST(AddRmsNormCuda, EqualsUnfusedBf16) { REQUIRE_CUDA(); expect_cuda_equals_unfused({torch::kBFloat16, {5, 7, 67}}); }
TEST(AddRmsNormCuda, EqualsUnfusedBf16UnitOffsetNotContiguous) {
  REQUIRE_CUDA();
  expect_cuda_equals_unfused({torch::kBFloat16, {6, 5, 40}, true, true});
}
TEST(AddRmsNormCuda, EqualsUnfusedBf16ManyRowsWide) {
  REQUIRE_CUDA();
  expect_cuda_equals_unfused({torch::kBFloat16, {16, 256, 2048}});  // Llama-3.2-1B's width
}

// ---- LayerNorm ------------------------------------------------------------------------------

constexpr auto kLayer = testing::AddNormKind::layer;
constexpr auto kNoAffine = testing::AddNormKind::layer_no_affine;

TEST(AddLayerNormCuda, EqualsUnfusedFp32) {
  REQUIRE_CUDA();
  expect_cuda_equals_unfused({torch::kFloat, {5, 7, 67}, false, false, 1e-5, kLayer});
}
TEST(AddLayerNormCuda, EqualsUnfusedFp32NoParameters) {
  REQUIRE_CUDA();
  expect_cuda_equals_unfused({torch::kFloat, {5, 7, 67}, false, false, 1e-5, kNoAffine});
}
TEST(AddLayerNormCuda, EqualsUnfusedFp32NarrowerThanAWarp) {
  REQUIRE_CUDA();
  expect_cuda_equals_unfused({torch::kFloat, {3, 4, 5}, false, false, 1e-5, kLayer});
}
TEST(AddLayerNormCuda, EqualsUnfusedFp32WideNotContiguous) {  // 512 threads per block
  REQUIRE_CUDA();
  expect_cuda_equals_unfused({torch::kFloat, {4, 8, 4100}, false, true, 1e-5, kLayer});
}
TEST(AddLayerNormCuda, EqualsUnfusedFp32ManyRows) {  // more rows than backward's parts on any GPU
  REQUIRE_CUDA();
  expect_cuda_equals_unfused({torch::kFloat, {64, 300, 96}, false, false, 1e-5, kLayer});
}
TEST(AddLayerNormCuda, EqualsUnfusedBf16) {
  REQUIRE_CUDA();
  expect_cuda_equals_unfused({torch::kBFloat16, {5, 7, 67}, false, false, 1e-5, kLayer});
}
TEST(AddLayerNormCuda, EqualsUnfusedBf16NoParametersManyRowsWide) {
  REQUIRE_CUDA();
  expect_cuda_equals_unfused({torch::kBFloat16, {16, 256, 2560}, false, false, 1e-5, kNoAffine});  // phi-2's width
}
TEST(AddLayerNormCuda, SameBitsTwice) {
  REQUIRE_CUDA();
  const AddNormCase c{torch::kFloat, {64, 300, 96}, false, false, 1e-5, kLayer};
  const auto first = fused_outcome(c, kCuda);
  const auto second = fused_outcome(c, kCuda);
  EXPECT_TRUE(torch::equal(first.y, second.y));
  EXPECT_TRUE(torch::equal(first.grad_x, second.grad_x));
  EXPECT_TRUE(torch::equal(first.grad_weight, second.grad_weight));
  EXPECT_TRUE(torch::equal(first.grad_bias, second.grad_bias));
}

// The comparison can fail: a wrong eps moves the norm and its gradients beyond the tolerance.
TEST(AddRmsNormCuda, ComparisonDetectsTheWrongEps) {
  REQUIRE_CUDA();
  const AddNormCase c{torch::kFloat, {5, 7, 67}};
  auto wrong = c;
  wrong.eps = 0.5;
  const auto got = fused_outcome(wrong, kCuda);
  const auto want = testing::unfused_add_norm_outcome(c);
  EXPECT_FALSE(close(got.y, want.y, kFp32Tolerance));
  EXPECT_FALSE(close(got.grad_x, want.grad_x, kFp32Tolerance));
}

// grad_weight's parts are fixed by the row count and the device: the same bits each time.
TEST(AddRmsNormCuda, SameBitsTwice) {
  REQUIRE_CUDA();
  const AddNormCase c{torch::kFloat, {64, 300, 96}};
  const auto first = fused_outcome(c, kCuda);
  const auto second = fused_outcome(c, kCuda);
  EXPECT_TRUE(torch::equal(first.y, second.y));
  EXPECT_TRUE(torch::equal(first.grad_x, second.grad_x));
  EXPECT_TRUE(torch::equal(first.grad_weight, second.grad_weight));
}

// The kernels launch on the tensors' own device, not the current one (needs two GPUs).
TEST(AddRmsNormCuda, RunsOnTheTensorsDeviceNotTheCurrentOne) {
  REQUIRE_CUDA();
  const auto count = torch::cuda::device_count();
  if (count < 2) GTEST_SKIP() << "one CUDA device: the other-device case needs two";
  const AddNormCase c{torch::kFloat, {5, 7, 67}};
  const auto got = fused_outcome(c, torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(count - 1)));
  testing::expect_add_norm_close(got, testing::unfused_add_norm_outcome(c), kFp32Tolerance);
}

// ---- installed in fixture models ---------------------------------------------------------

class AddNormKernelInModel : public ::testing::TestWithParam<std::string> {};

TEST_P(AddNormKernelInModel, EqualsTheCpuModel) {
  REQUIRE_CUDA();
  const auto [got, calls] = testing::add_norm_model_outcome(GetParam(), kCuda, true);
  const auto want = testing::add_norm_model_outcome(GetParam(), torch::kCPU, false).first;
  const auto fixture = testing::fixture_model(GetParam(), torch::kFloat, torch::kCPU);
  EXPECT_EQ(calls, testing::expected_fused_adds(fixture.gpt->config())) << "adds that went through the hooks";
  // The model's other CUDA operators (GEMMs, attention) sum in their own order: a looser bound.
  constexpr double kModelTolerance = 1e-4;
  EXPECT_TRUE(close(got.hidden, want.hidden, kModelTolerance)) << "hidden";
  ASSERT_EQ(got.grads.size(), want.grads.size());
  for (const auto& [name, grad] : want.grads) EXPECT_TRUE(close(got.grads.at(name), grad, kModelTolerance)) << "grad of " << name;
}

// llama-3.1: the target's family (Llama-3.2-1B); gemma-3: unit offset, post-attention norm;
// pythia, phi-2, falcon: parallel residual, LayerNorm; olmo: LayerNorm without parameters.
INSTANTIATE_TEST_SUITE_P(Families, AddNormKernelInModel,
                         ::testing::Values("llama-3.1", "gemma-3", "pythia", "phi-2", "falcon", "olmo"),
                         [](const auto& info) { return model::testing::test_name(info.param); });

}  // namespace
}  // namespace tokbench::train
