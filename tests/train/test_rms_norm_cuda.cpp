// The CUDA RMSNorm kernels (cuda/rms_norm_kernels.cu, through rms_norm_rows on a CUDA tensor)
// against their CPU reference, the eager model's ATen composition run on the CPU: output,
// grad_x and grad_weight, fp32 and bf16, Gemma's unit offset, widths below a warp, odd widths
// and one wide enough for 512 threads, a non-contiguous input, more rows than backward's parts,
// and the same bits twice. ctest label `gpu`: where no CUDA device is present every case is
// skipped, saying so; scripts/gpu-acceptance runs them on the GPU. Tolerance: relative norm.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <string>
#include <vector>

#include "row_kernel_references.hpp"
#include "train/rms_norm_rows.hpp"

namespace tokbench::train {
namespace {

constexpr double kFp32Tolerance = 1e-5;
constexpr double kBf16Tolerance = 1e-2;  // 8 significant bits; a different sum order may round a value the other way

using testing::relative_error;

using testing::close;

using testing::aten_rms_norm;

struct NormCase {
  torch::ScalarType dtype;
  std::vector<int64_t> shape;  // (A, B, C): A·B rows of width C
  bool unit_offset = false;
  bool transposed = false;
};

struct Outcome {
  torch::Tensor y, grad_x, grad_weight;  // on the CPU
};

// y = norm(x, weight) on `device` and the gradients of Σ y·g; the inputs are drawn on the CPU
// from a fixed seed and copied, so both devices see the same values.
template <typename Norm>
Outcome outcome(const NormCase& c, const torch::Device& device, Norm&& norm) {
  torch::manual_seed(11);
  const int64_t width = c.shape.back();
  const auto x0 = (torch::randn(c.shape) * 2 + 0.5).to(c.dtype);
  const auto w0 = ((c.unit_offset ? 0 : 1) + torch::randn({width}) * 0.2).to(c.dtype);
  const auto g0 = torch::randn(c.transposed ? std::vector<int64_t>{c.shape[1], c.shape[0], width} : c.shape).to(c.dtype);
  auto x = x0.to(device).requires_grad_(true);
  auto weight = w0.to(device).requires_grad_(true);
  const auto input = c.transposed ? x.transpose(0, 1) : x;
  const auto y = norm(input, weight);
  (y.to(torch::kFloat) * g0.to(device).to(torch::kFloat)).sum().backward();
  return {y.detach().cpu(), x.grad().cpu(), weight.grad().cpu()};
}

bool have_cuda() { return torch::cuda::is_available(); }
#define REQUIRE_CUDA() \
  if (!have_cuda()) GTEST_SKIP() << "no CUDA device here: the CUDA kernels run in scripts/gpu-acceptance"

void expect_cuda_equals_cpu_reference(const NormCase& c, double eps = 1e-6) {
  const torch::Device cuda(torch::kCUDA, 0);
  const auto got = outcome(c, cuda, [&](const auto& x, const auto& w) { return rms_norm_rows(x, w, c.unit_offset, eps); });
  const auto want =
      outcome(c, torch::kCPU, [&](const auto& x, const auto& w) { return aten_rms_norm(x, w, c.unit_offset, eps); });
  const double tolerance = c.dtype == torch::kBFloat16 ? kBf16Tolerance : kFp32Tolerance;
  EXPECT_TRUE(close(got.y, want.y, tolerance)) << "output";
  EXPECT_TRUE(close(got.grad_x, want.grad_x, tolerance)) << "grad x";
  EXPECT_TRUE(close(got.grad_weight, want.grad_weight, tolerance)) << "grad weight";
}

TEST(RmsNormCuda, EqualsCpuReferenceFp32) { REQUIRE_CUDA(); expect_cuda_equals_cpu_reference({torch::kFloat, {5, 7, 67}}); }
TEST(RmsNormCuda, EqualsCpuReferenceFp32UnitOffset) {
  REQUIRE_CUDA();
  expect_cuda_equals_cpu_reference({torch::kFloat, {5, 7, 67}, true});
}
TEST(RmsNormCuda, EqualsCpuReferenceFp32NarrowerThanAWarp) {
  REQUIRE_CUDA();
  expect_cuda_equals_cpu_reference({torch::kFloat, {3, 4, 5}});
}
TEST(RmsNormCuda, EqualsCpuReferenceFp32Wide) {  // 512 threads per block
  REQUIRE_CUDA();
  expect_cuda_equals_cpu_reference({torch::kFloat, {4, 8, 4100}});
}
TEST(RmsNormCuda, EqualsCpuReferenceFp32NotContiguous) {
  REQUIRE_CUDA();
  expect_cuda_equals_cpu_reference({torch::kFloat, {6, 5, 40}, false, true});
}
TEST(RmsNormCuda, EqualsCpuReferenceFp32ManyRows) {  // more rows than backward's parts on any GPU
  REQUIRE_CUDA();
  expect_cuda_equals_cpu_reference({torch::kFloat, {64, 300, 96}, true});
}
TEST(RmsNormCuda, EqualsCpuReferenceFp32LargeEps) {
  REQUIRE_CUDA();
  expect_cuda_equals_cpu_reference({torch::kFloat, {5, 7, 67}}, 0.5);
}
TEST(RmsNormCuda, EqualsCpuReferenceBf16) { REQUIRE_CUDA(); expect_cuda_equals_cpu_reference({torch::kBFloat16, {5, 7, 67}}); }
TEST(RmsNormCuda, EqualsCpuReferenceBf16UnitOffset) {
  REQUIRE_CUDA();
  expect_cuda_equals_cpu_reference({torch::kBFloat16, {5, 7, 67}, true});
}
TEST(RmsNormCuda, EqualsCpuReferenceBf16ManyRowsWide) {
  REQUIRE_CUDA();
  expect_cuda_equals_cpu_reference({torch::kBFloat16, {16, 256, 2048}, true});
}

// The comparison can fail: the unit offset left out is far beyond the tolerance.
TEST(RmsNormCuda, ComparisonDetectsAMissingUnitOffset) {
  REQUIRE_CUDA();
  const NormCase c{torch::kFloat, {5, 7, 67}, true};
  const torch::Device cuda(torch::kCUDA, 0);
  const auto got = outcome(c, cuda, [](const auto& x, const auto& w) { return rms_norm_rows(x, w, false, 1e-6); });
  const auto want = outcome(c, torch::kCPU, [](const auto& x, const auto& w) { return aten_rms_norm(x, w, true, 1e-6); });
  EXPECT_FALSE(close(got.y, want.y, kFp32Tolerance));
  EXPECT_FALSE(close(got.grad_x, want.grad_x, kFp32Tolerance));
}

// grad_weight's parts are fixed by the row count and the device: the same bits each time.
TEST(RmsNormCuda, SameBitsTwice) {
  REQUIRE_CUDA();
  const NormCase c{torch::kFloat, {64, 300, 96}};
  const torch::Device cuda(torch::kCUDA, 0);
  const auto norm = [](const auto& x, const auto& w) { return rms_norm_rows(x, w, false, 1e-6); };
  const auto first = outcome(c, cuda, norm);
  const auto second = outcome(c, cuda, norm);
  EXPECT_TRUE(torch::equal(first.y, second.y));
  EXPECT_TRUE(torch::equal(first.grad_x, second.grad_x));
  EXPECT_TRUE(torch::equal(first.grad_weight, second.grad_weight));
}

// The kernels launch on the tensors' own device, not the current one: a tensor on the last
// device is normalised while device 0 is current (needs two GPUs; one GPU skips it).
TEST(RmsNormCuda, RunsOnTheTensorsDeviceNotTheCurrentOne) {
  REQUIRE_CUDA();
  const auto count = torch::cuda::device_count();
  if (count < 2) GTEST_SKIP() << "one CUDA device: the other-device case needs two";
  const torch::Device last(torch::kCUDA, static_cast<c10::DeviceIndex>(count - 1));
  const NormCase c{torch::kFloat, {5, 7, 67}};
  const auto got = outcome(c, last, [](const auto& x, const auto& w) { return rms_norm_rows(x, w, false, 1e-6); });
  const auto want = outcome(c, torch::kCPU, [](const auto& x, const auto& w) { return aten_rms_norm(x, w, false, 1e-6); });
  EXPECT_TRUE(close(got.y, want.y, kFp32Tolerance));
  EXPECT_TRUE(close(got.grad_weight, want.grad_weight, kFp32Tolerance));
}

}  // namespace
}  // namespace tokbench::train
