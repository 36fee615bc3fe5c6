// AdamW: both implementations match LibTorch's reference torch::optim::AdamW step for step (and,
// with --grad-clip-norm, LibTorch's clip_grad_norm_ before it), count their steps, and zero
// gradients in place; parameter dtypes and capability checks per precision.
#include <gtest/gtest.h>

#include <torch/nn/utils/clip_grad.h>
#include <torch/optim/adamw.h>
#include <torch/torch.h>

#include <optional>
#include <stdexcept>

#include "train/dtype_mode.hpp"
#include "train/optimizer.hpp"

namespace tokbench::train {
namespace {

// With `clip`, the gradients are clipped as clip_grad_norm_ clips them, in place: their scale
// changes from step to step (x100, then x0.01) so that the clip acts on the first step only and
// the moments, which a uniform scale would leave almost unchanged, carry that.
void check_matches_libtorch(bool fused, std::optional<double> clip = std::nullopt) {
  torch::manual_seed(0);
  const std::vector<torch::Tensor> init = {torch::randn({7, 5}), torch::randn({5})};
  std::vector<torch::Tensor> ours, theirs;
  for (const auto& t : init) {
    ours.push_back(t.clone().requires_grad_(true));
    theirs.push_back(t.clone().requires_grad_(true));
  }
  AdamWOptions options;
  options.fused = fused;
  options.grad_clip_norm = clip;
  AdamW optimizer(ours, options, torch::Device(torch::kCPU));
  torch::optim::AdamW reference(theirs, torch::optim::AdamWOptions(options.lr)
                                            .betas({options.beta1, options.beta2})
                                            .weight_decay(options.weight_decay)
                                            .eps(options.eps));
  for (int step = 1; step <= 3; ++step) {
    for (std::size_t i = 0; i < init.size(); ++i) {
      const torch::Tensor g = torch::randn(init[i].sizes()) * (clip ? (step == 1 ? 100.0 : 0.01) : 1.0);
      (ours[i] * g).sum().backward();
      (theirs[i] * g).sum().backward();
    }
    const torch::Tensor grad_before = ours[0].grad();
    optimizer.step();
    if (clip) {
      const double norm = torch::nn::utils::clip_grad_norm_(theirs, *clip);
      EXPECT_EQ(norm > *clip, step == 1) << "step " << step;
      for (std::size_t i = 0; i < init.size(); ++i)
        EXPECT_TRUE(torch::allclose(ours[i].grad(), theirs[i].grad(), 1e-6, 1e-7)) << "grad " << i << " step " << step;
    }
    reference.step();
    optimizer.zero_grad();
    reference.zero_grad(false);
    EXPECT_TRUE(ours[0].grad().is_same(grad_before)) << "zero_grad must not reallocate";
    EXPECT_EQ(ours[0].grad().abs().sum().item<float>(), 0.0f);
    EXPECT_EQ(optimizer.state_step(), step);
    for (std::size_t i = 0; i < init.size(); ++i) {
      EXPECT_TRUE(torch::allclose(ours[i], theirs[i], 1e-6, 1e-6)) << "param " << i << " step " << step;
      EXPECT_FALSE(torch::equal(ours[i], init[i]));
    }
  }
}

TEST(AdamW, SingleTensorMatchesLibTorch) { check_matches_libtorch(false); }
TEST(AdamW, ClippedSingleTensorMatchesLibTorch) { check_matches_libtorch(false, 1.0); }
TEST(AdamW, ClippedFusedMatchesLibTorch) { check_matches_libtorch(true, 1.0); }
TEST(AdamW, FusedMatchesLibTorch) { check_matches_libtorch(true); }

TEST(AdamW, DefaultsToFusedAndCanBeAskedForTheLoop) {
  AdamW cpu({torch::zeros({2}, torch::requires_grad())}, AdamWOptions{}, torch::Device(torch::kCPU));
  EXPECT_TRUE(cpu.fused());
  AdamW cuda({torch::zeros({2}, torch::requires_grad())}, AdamWOptions{}, torch::Device(torch::kCUDA));
  EXPECT_TRUE(cuda.fused());
  AdamWOptions loop;
  loop.fused = false;
  EXPECT_FALSE(AdamW({torch::zeros({2}, torch::requires_grad())}, loop, torch::Device(torch::kCPU)).fused());
}

TEST(DtypeMode, ParamDtypeFollowsPrecision) {
  EXPECT_EQ(param_dtype(model::TrainPrecision::fp32), c10::kFloat);
  EXPECT_EQ(param_dtype(model::TrainPrecision::bf16_true), c10::kBFloat16);
  EXPECT_EQ(param_dtype(model::TrainPrecision::bf16_mixed), c10::kFloat);
}

TEST(DtypeMode, CpuRunsEveryModeAndMissingCudaSaysWhy) {
  for (model::TrainPrecision precision : model::kTrainPrecisions) {
    EXPECT_TRUE(dtype_supported(precision, c10::Device(c10::kCPU)));
  }
  if (!torch::cuda::is_available()) {
    std::string why;
    EXPECT_FALSE(dtype_supported(model::TrainPrecision::bf16_true, c10::Device(c10::kCUDA, 0), &why));
    EXPECT_FALSE(why.empty());
  }
}

}  // namespace
}  // namespace tokbench::train
