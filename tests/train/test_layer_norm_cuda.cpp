// The CUDA LayerNorm kernels (cuda/layer_norm_kernels.cu, through layer_norm_rows on a CUDA
// tensor) against their CPU reference, the eager model's torch::layer_norm run on the CPU:
// output, grad_x, grad_weight and grad_bias, fp32 and bf16, widths below a warp, odd widths
// and one wide enough for 512 threads, a non-contiguous input, rows far from zero (the
// variance's digits), more rows than backward's parts, and the same bits twice; and the
// LayerNorm fixture models (pythia, phi-2, falcon) with the kernel installed against the same
// models on the CPU. ctest label `gpu` (one ctest, cuda_kernels, with the other CUDA suites):
// where no CUDA device is present every case is skipped, saying so. Tolerance: relative norm.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "fixture_model.hpp"
#include "row_kernel_references.hpp"
#include "train/layer_norm_rows.hpp"

namespace tokbench::train {
namespace {

constexpr double kFp32Tolerance = 1e-5;
constexpr double kBf16Tolerance = 1e-2;  // 8 significant bits; a different sum order may round a value the other way

using testing::aten_layer_norm;
using testing::close;

struct NormCase {
  torch::ScalarType dtype;
  std::vector<int64_t> shape;  // (A, B, C): A·B rows of width C
  bool transposed = false;
  double offset = 0.5;  // added to every x: far from zero, a one-pass variance loses digits
};

struct Outcome {
  torch::Tensor y, grad_x, grad_weight, grad_bias;  // on the CPU
};

// y = norm(x, weight, bias) on `device` and the gradients of Σ y·g; the inputs are drawn on
// the CPU from a fixed seed and copied, so both devices see the same values.
template <typename Norm>
Outcome outcome(const NormCase& c, const torch::Device& device, Norm&& norm) {
  torch::manual_seed(19);
  const int64_t width = c.shape.back();
  const auto x0 = (torch::randn(c.shape) * 2 + c.offset).to(c.dtype);
  const auto w0 = (1 + torch::randn({width}) * 0.2).to(c.dtype);
  const auto b0 = (torch::randn({width}) * 0.1).to(c.dtype);
  const auto g0 = torch::randn(c.transposed ? std::vector<int64_t>{c.shape[1], c.shape[0], width} : c.shape).to(c.dtype);
  auto x = x0.to(device).requires_grad_(true);
  auto weight = w0.to(device).requires_grad_(true);
  auto bias = b0.to(device).requires_grad_(true);
  const auto input = c.transposed ? x.transpose(0, 1) : x;
  const auto y = norm(input, weight, bias);
  (y.to(torch::kFloat) * g0.to(device).to(torch::kFloat)).sum().backward();
  return {y.detach().cpu(), x.grad().cpu(), weight.grad().cpu(), bias.grad().cpu()};
}

bool have_cuda() { return torch::cuda::is_available(); }
#define REQUIRE_CUDA() \
  if (!have_cuda()) GTEST_SKIP() << "no CUDA device here: the CUDA kernels run in scripts/gpu-acceptance"

const torch::Device kCuda(torch::kCUDA, 0);

void expect_cuda_equals_cpu_reference(const NormCase& c, double eps = 1e-5) {
  const auto got =
      outcome(c, kCuda, [&](const auto& x, const auto& w, const auto& b) { return layer_norm_rows(x, w, b, eps); });
  const auto want = outcome(c, torch::kCPU,
                            [&](const auto& x, const auto& w, const auto& b) { return aten_layer_norm(x, w, b, eps); });
  const double tolerance = c.dtype == torch::kBFloat16 ? kBf16Tolerance : kFp32Tolerance;
  EXPECT_TRUE(close(got.y, want.y, tolerance)) << "output";
  EXPECT_TRUE(close(got.grad_x, want.grad_x, tolerance)) << "grad x";
  EXPECT_TRUE(close(got.grad_weight, want.grad_weight, tolerance)) << "grad weight";
  EXPECT_TRUE(close(got.grad_bias, want.grad_bias, tolerance)) << "grad bias";
}

TEST(LayerNormCuda, EqualsCpuReferenceFp32) { REQUIRE_CUDA(); expect_cuda_equals_cpu_reference({torch::kFloat, {5, 7, 67}}); }
TEST(LayerNormCuda, EqualsCpuReferenceFp32NarrowerThanAWarp) {
  REQUIRE_CUDA();
  expect_cuda_equals_cpu_reference({torch::kFloat, {3, 4, 5}});
}
TEST(LayerNormCuda, EqualsCpuReferenceFp32Wide) {  // 512 threads per block
  REQUIRE_CUDA();
  expect_cuda_equals_cpu_reference({torch::kFloat, {4, 8, 4100}});
}
TEST(LayerNormCuda, EqualsCpuReferenceFp32NotContiguous) {
  REQUIRE_CUDA();
  expect_cuda_equals_cpu_reference({torch::kFloat, {6, 5, 40}, true});
}
TEST(LayerNormCuda, EqualsCpuReferenceFp32FarFromZero) {
  REQUIRE_CUDA();
  expect_cuda_equals_cpu_reference({torch::kFloat, {5, 7, 256}, false, 300.0});
}
TEST(LayerNormCuda, EqualsCpuReferenceFp32ManyRows) {  // more rows than backward's parts on any GPU
  REQUIRE_CUDA();
  expect_cuda_equals_cpu_reference({torch::kFloat, {64, 300, 96}});
}
TEST(LayerNormCuda, EqualsCpuReferenceFp32LargeEps) {
  REQUIRE_CUDA();
  expect_cuda_equals_cpu_reference({torch::kFloat, {5, 7, 67}}, 0.5);
}
TEST(LayerNormCuda, EqualsCpuReferenceBf16) { REQUIRE_CUDA(); expect_cuda_equals_cpu_reference({torch::kBFloat16, {5, 7, 67}}); }
TEST(LayerNormCuda, EqualsCpuReferenceBf16ManyRowsWide) {
  REQUIRE_CUDA();
  expect_cuda_equals_cpu_reference({torch::kBFloat16, {16, 256, 2560}});  // phi-2's width
}

// The comparison can fail: an eps ten thousand times larger moves every output well beyond
// the tolerance.
TEST(LayerNormCuda, ComparisonDetectsTheWrongEps) {
  REQUIRE_CUDA();
  const NormCase c{torch::kFloat, {5, 7, 67}};
  const auto got =
      outcome(c, kCuda, [](const auto& x, const auto& w, const auto& b) { return layer_norm_rows(x, w, b, 0.1); });
  const auto want = outcome(c, torch::kCPU,
                            [](const auto& x, const auto& w, const auto& b) { return aten_layer_norm(x, w, b, 1e-5); });
  EXPECT_FALSE(close(got.y, want.y, kFp32Tolerance));
  EXPECT_FALSE(close(got.grad_x, want.grad_x, kFp32Tolerance));
}

// grad_weight's and grad_bias's parts are fixed by the row count and the device: the same
// bits each time.
TEST(LayerNormCuda, SameBitsTwice) {
  REQUIRE_CUDA();
  const NormCase c{torch::kFloat, {64, 300, 96}};
  const auto norm = [](const auto& x, const auto& w, const auto& b) { return layer_norm_rows(x, w, b, 1e-5); };
  const auto first = outcome(c, kCuda, norm);
  const auto second = outcome(c, kCuda, norm);
  EXPECT_TRUE(torch::equal(first.y, second.y));
  EXPECT_TRUE(torch::equal(first.grad_x, second.grad_x));
  EXPECT_TRUE(torch::equal(first.grad_weight, second.grad_weight));
  EXPECT_TRUE(torch::equal(first.grad_bias, second.grad_bias));
}

// The kernels launch on the tensors' own device, not the current one (needs two GPUs).
TEST(LayerNormCuda, RunsOnTheTensorsDeviceNotTheCurrentOne) {
  REQUIRE_CUDA();
  const auto count = torch::cuda::device_count();
  if (count < 2) GTEST_SKIP() << "one CUDA device: the other-device case needs two";
  const torch::Device last(torch::kCUDA, static_cast<c10::DeviceIndex>(count - 1));
  const NormCase c{torch::kFloat, {5, 7, 67}};
  const auto got =
      outcome(c, last, [](const auto& x, const auto& w, const auto& b) { return layer_norm_rows(x, w, b, 1e-5); });
  const auto want = outcome(c, torch::kCPU,
                            [](const auto& x, const auto& w, const auto& b) { return aten_layer_norm(x, w, b, 1e-5); });
  EXPECT_TRUE(close(got.y, want.y, kFp32Tolerance));
  EXPECT_TRUE(close(got.grad_bias, want.grad_bias, kFp32Tolerance));
}

// ---- installed in the LayerNorm fixture models -----------------------------------------

// forward_hidden of a fixture model on `device` and its gradients (fixture_model.hpp), fp32;
// with layer_norm_rows as the model's LayerNorm function when `kernel`, counting its calls.
std::pair<testing::ModelOutcome, int> model_outcome(const std::string& family, const torch::Device& device,
                                                     bool kernel) {
  auto fixture = testing::fixture_model(family, torch::kFloat, device);
  int calls = 0;
  if (kernel)
    fixture.gpt->set_layer_norm_function(
        [&calls](const torch::Tensor& x, const torch::Tensor& w, const torch::Tensor& b, double eps) {
          ++calls;
          return layer_norm_rows(x, w, b, eps);
        });
  return {testing::forward_and_backward(fixture), calls};
}

class LayerNormKernelInModel : public ::testing::TestWithParam<std::string> {};

TEST_P(LayerNormKernelInModel, EqualsTheCpuModel) {
  REQUIRE_CUDA();
  const auto [got, calls] = model_outcome(GetParam(), kCuda, true);
  const auto want = model_outcome(GetParam(), torch::kCPU, false).first;
  EXPECT_GT(calls, 0) << "no LayerNorm went through the hook";
  // The model's other CUDA operators (GEMMs, attention) sum in their own order: a looser bound.
  constexpr double kModelTolerance = 1e-4;
  EXPECT_TRUE(close(got.hidden, want.hidden, kModelTolerance)) << "hidden";
  ASSERT_EQ(got.grads.size(), want.grads.size());
  for (const auto& [name, grad] : want.grads) EXPECT_TRUE(close(got.grads.at(name), grad, kModelTolerance)) << "grad of " << name;
}

// pythia: parallel residual, two norms per block; phi-2 and falcon: one norm shared by
// attention and MLP.
INSTANTIATE_TEST_SUITE_P(Families, LayerNormKernelInModel, ::testing::Values("pythia", "phi-2", "falcon"),
                         [](const auto& info) { return model::testing::test_name(info.param); });

}  // namespace
}  // namespace tokbench::train
