// The CUDA cross-entropy row kernel (cuda/cross_entropy_kernels.cu, through
// cross_entropy_rows_cuda_in_place) and the fused executor's chunked lm_head + loss on CUDA
// against their CPU reference, at::cross_entropy_loss with autograd on the CPU: per-row losses
// and gradients, fp32 and bf16 logits, with and without soft-capping, ignored rows, rows whose
// logits overflow exp without the maximum subtracted, a vocabulary below a warp and one of
// litgpt's size; an out-of-range target's NaN. ctest label `gpu`: every case skips, saying so,
// where no CUDA device is present; scripts/gpu-acceptance runs them on the GPU.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <optional>
#include <utility>

#include "row_kernel_references.hpp"
#include "train/cuda_row_kernels.hpp"
#include "train/fused_ops.hpp"
#include "train/gemm_kernels.hpp"

namespace tokbench::train {
namespace {

#define REQUIRE_CUDA()                  \
  if (!torch::cuda::is_available()) \
  GTEST_SKIP() << "no CUDA device here: the CUDA kernels run in scripts/gpu-acceptance"

using testing::relative_error;

struct RowsCase {
  torch::ScalarType dtype;
  int64_t rows, vocab;
  std::optional<double> softcap;
};

std::pair<torch::Tensor, torch::Tensor> reference(const torch::Tensor& logits, const torch::Tensor& targets,
                                                  std::optional<double> softcap, double scale) {
  auto r = testing::cross_entropy_reference(logits, targets, softcap, scale);
  return {r.losses, r.grad};
}

std::pair<torch::Tensor, torch::Tensor> inputs(const RowsCase& c) {
  return testing::cross_entropy_inputs(c.rows, c.vocab, c.dtype);
}

void check_rows(const RowsCase& c) {
  constexpr double kScale = 0.037;  // 1 / count · 1 / grad_accum in the chunked head
  const torch::Device cuda(torch::kCUDA, 0);
  const auto [logits, targets] = inputs(c);
  const auto [want_losses, want_grad] = reference(logits, targets, c.softcap, kScale);
  auto grad = logits.to(cuda);
  const auto scale = torch::full({}, kScale, torch::TensorOptions().dtype(torch::kFloat).device(cuda));
  const auto losses = cross_entropy_rows_cuda_in_place(grad, targets.to(cuda), c.softcap, scale).cpu();
  ASSERT_EQ(losses.scalar_type(), torch::kFloat);
  ASSERT_EQ(grad.scalar_type(), c.dtype);
  EXPECT_TRUE(torch::isfinite(losses).all().item<bool>()) << losses;
  EXPECT_LE(relative_error(losses, want_losses), 1e-5) << "losses";
  const double grad_tolerance = c.dtype == torch::kFloat ? 1e-5 : 4e-3;  // bf16: the fp32 gradient rounded once
  EXPECT_LE(relative_error(grad, want_grad), grad_tolerance) << "gradient";
  const auto ignored = targets.eq(-1);
  EXPECT_EQ(grad.cpu().index({ignored}).abs().sum().item<double>(), 0.0);
  EXPECT_EQ(losses.index({ignored}).abs().sum().item<double>(), 0.0);
}

TEST(CrossEntropyCuda, Fp32EqualsCrossEntropy) { REQUIRE_CUDA(); check_rows({torch::kFloat, 24, 1003, {}}); }
TEST(CrossEntropyCuda, Fp32SoftcappedEqualsCrossEntropy) { REQUIRE_CUDA(); check_rows({torch::kFloat, 24, 1003, 30.0}); }
TEST(CrossEntropyCuda, Bf16EqualsCrossEntropy) { REQUIRE_CUDA(); check_rows({torch::kBFloat16, 24, 1003, {}}); }
TEST(CrossEntropyCuda, Bf16SoftcappedEqualsCrossEntropy) {
  REQUIRE_CUDA();
  check_rows({torch::kBFloat16, 24, 1003, 30.0});
}
TEST(CrossEntropyCuda, VocabNarrowerThanAWarp) {
  REQUIRE_CUDA();
  check_rows({torch::kFloat, 9, 5, {}});
  check_rows({torch::kBFloat16, 9, 5, 3.0});
}
TEST(CrossEntropyCuda, LlamaSizedVocab) {  // 1024 threads per row
  REQUIRE_CUDA();
  check_rows({torch::kFloat, 6, 128256, {}});
  check_rows({torch::kBFloat16, 6, 128256, {}});
}

// The comparison can fail: a target off by one changes that row's loss and gradient.
TEST(CrossEntropyCuda, ComparisonDetectsAWrongTarget) {
  REQUIRE_CUDA();
  const torch::Device cuda(torch::kCUDA, 0);
  auto [logits, targets] = inputs({torch::kFloat, 8, 37, {}});
  targets[0] = 4;
  const auto [want_losses, want_grad] = reference(logits, targets, {}, 1.0);
  auto shifted = targets.clone();
  shifted[0] = 5;
  auto grad = logits.to(cuda);
  const auto one = torch::ones({}, torch::TensorOptions().dtype(torch::kFloat).device(cuda));
  const auto losses = cross_entropy_rows_cuda_in_place(grad, shifted.to(cuda), {}, one);
  EXPECT_GT(relative_error(losses, want_losses), 1e-5);
  EXPECT_GT(relative_error(grad, want_grad), 1e-5);
}

// A target outside the vocabulary cannot be checked on the host without a sync: its row's loss
// is NaN, which the run's NaN check stops on, and its gradient zero.
TEST(CrossEntropyCuda, TargetOutOfRangeGivesNaN) {
  REQUIRE_CUDA();
  const torch::Device cuda(torch::kCUDA, 0);
  auto grad = torch::randn({3, 10}).to(cuda);
  const auto one = torch::ones({}, torch::TensorOptions().dtype(torch::kFloat).device(cuda));
  const auto targets = torch::tensor({int64_t{2}, int64_t{10}, int64_t{-1}}).to(cuda);
  const auto losses = cross_entropy_rows_cuda_in_place(grad, targets, {}, one).cpu();
  EXPECT_TRUE(std::isfinite(losses[0].item<float>()));
  EXPECT_TRUE(std::isnan(losses[1].item<float>()));
  EXPECT_EQ(losses[2].item<float>(), 0.0f);
  EXPECT_EQ(grad[1].abs().sum().item<double>(), 0.0);
}

// The chunked head on CUDA (several chunks, a bias, a soft-cap) against the CPU's
// at::cross_entropy of hidden · Wᵀ + b: loss and the gradients of hidden, weight and bias.
TEST(CrossEntropyCuda, ChunkedHeadEqualsCrossEntropy) {
  REQUIRE_CUDA();
  const torch::Device cuda(torch::kCUDA, 0);
  torch::manual_seed(3);
  const auto hidden0 = torch::randn({50, 16}), weight0 = torch::randn({301, 16}) * 0.3, bias0 = torch::randn({301});
  auto targets = torch::randint(301, {50}, torch::kLong);
  targets[7] = -1;
  ChunkedCrossEntropyOptions options;
  options.chunk_rows = 16;  // four chunks, the last one short
  options.softcap = 20.0;
  auto h = hidden0.to(cuda).requires_grad_(true), w = weight0.to(cuda).requires_grad_(true),
       b = bias0.to(cuda).requires_grad_(true);
  const GemmChoices choices;  // ATen's GEMMs
  const auto loss = chunked_linear_cross_entropy(h, w, b, targets.to(cuda), choices, options);
  loss.backward();
  auto h_ref = hidden0.clone().requires_grad_(true), w_ref = weight0.clone().requires_grad_(true),
       b_ref = bias0.clone().requires_grad_(true);
  const auto z = torch::tanh(torch::addmm(b_ref, h_ref, w_ref.t()) / 20.0) * 20.0;
  const auto want = at::cross_entropy_loss(z, targets, {}, at::Reduction::Mean, -1);
  want.backward();
  EXPECT_LE(relative_error(loss, want), 1e-5);
  EXPECT_LE(relative_error(h.grad(), h_ref.grad()), 1e-5);
  EXPECT_LE(relative_error(w.grad(), w_ref.grad()), 1e-5);
  EXPECT_LE(relative_error(b.grad(), b_ref.grad()), 1e-5);
}

}  // namespace
}  // namespace tokbench::train
