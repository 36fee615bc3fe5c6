// The CPU references the row kernels are held to, on either device (test_norm_rows.cpp and
// test_cross_entropy_rows.cpp for the CPU kernels, test_rms_norm_cuda.cpp,
// test_layer_norm_cuda.cpp and test_cross_entropy_cuda.cpp for the CUDA ones): the eager
// model's ATen compositions, run on the CPU, the inputs the cross-entropy cases draw, and the
// comparison the suites share. Tolerances stay with each suite.
#pragma once

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <optional>
#include <utility>

namespace tokbench::train::testing {

// ‖got − want‖ / ‖want‖ in double, on the CPU whatever device `got` is on.
inline double relative_error(const torch::Tensor& got, const torch::Tensor& want) {
  const auto g = got.to(torch::kCPU, torch::kDouble), w = want.to(torch::kCPU, torch::kDouble);
  return ((g - w).norm() / w.norm().clamp_min(1e-30)).item<double>();
}

// got equals want within `tolerance` in relative norm, with the same shape and dtype (two
// empty tensors of one shape are equal); the failure says which of these it was.
inline ::testing::AssertionResult close(const torch::Tensor& got, const torch::Tensor& want, double tolerance) {
  if (!got.defined() || !want.defined())
    return ::testing::AssertionFailure() << "undefined tensor (got " << got.defined() << ", want " << want.defined()
                                         << ")";
  if (got.sizes() != want.sizes() || got.scalar_type() != want.scalar_type())
    return ::testing::AssertionFailure() << "got " << got.sizes() << " " << got.scalar_type() << ", want "
                                         << want.sizes() << " " << want.scalar_type();
  if (want.numel() == 0) return ::testing::AssertionSuccess();
  const double error = relative_error(got, want);
  if (error <= tolerance) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "relative error " << error << " > " << tolerance;
}

// The eager model's RMSNorm (litgpt): fp32 statistics and scaling, the unit offset added in
// weight's dtype, the result cast back.
inline torch::Tensor aten_rms_norm(const torch::Tensor& x, const torch::Tensor& weight, bool unit_offset, double eps) {
  auto xf = x.to(torch::kFloat);
  auto normed = xf * torch::rsqrt((xf * xf).mean(-1, /*keepdim=*/true) + eps);
  auto w = unit_offset ? 1 + weight : weight;
  return (normed * w.to(torch::kFloat)).to(x.scalar_type());
}

// The eager model's LayerNorm with weight and bias (torch.nn.LayerNorm over the last
// dimension). For bf16 inputs it runs in fp64 on their values and rounds the result (and,
// through autograd, every gradient) to bf16 once: ATen's own bf16 LayerNorm on the CPU sums
// grad_w and grad_b with bf16 roundings (about 5% off the fp64 sums at 4288 rows of width 96,
// where its grad_x is 0.25% off), while the kernels keep those sums in fp32.
inline torch::Tensor aten_layer_norm(const torch::Tensor& x, const torch::Tensor& weight, const torch::Tensor& bias,
                                     double eps) {
  if (x.scalar_type() != torch::kBFloat16) return torch::layer_norm(x, {x.size(-1)}, weight, bias, eps);
  return torch::layer_norm(x.to(torch::kDouble), {x.size(-1)}, weight.to(torch::kDouble), bias.to(torch::kDouble), eps)
      .to(x.scalar_type());
}

struct CrossEntropyReference {
  torch::Tensor losses, grad;  // (R) fp32, (R, V) fp32, on the CPU
};

// at::cross_entropy on the CPU, on the fp32 values of the logits, soft-capped as the model does;
// the gradient of scale · Σ losses by autograd.
inline CrossEntropyReference cross_entropy_reference(const torch::Tensor& logits, const torch::Tensor& targets,
                                                     std::optional<double> softcap, double scale) {
  auto x = logits.to(torch::kCPU, torch::kFloat).detach().requires_grad_(true);
  auto z = softcap ? torch::tanh(x / *softcap) * *softcap : x;
  auto losses = at::cross_entropy_loss(z, targets.cpu(), {}, at::Reduction::None, -1);
  (losses.sum() * scale).backward();
  return {losses.detach(), x.grad()};
}

// Logits around 0 with every third row shifted by +300 (exp(300) overflows fp32), about a
// quarter of the targets ignored (row 1 always); on the CPU.
inline std::pair<torch::Tensor, torch::Tensor> cross_entropy_inputs(int64_t rows, int64_t vocab,
                                                                    torch::ScalarType dtype) {
  torch::manual_seed(17);
  auto logits = torch::randn({rows, vocab}) * 3;
  logits.slice(0, 0, rows, 3).add_(300);
  auto targets = torch::randint(vocab, {rows}, torch::kLong);
  targets.index_put_({torch::rand({rows}) < 0.25}, -1);
  targets[1] = -1;
  return {logits.to(dtype), targets};
}

}  // namespace tokbench::train::testing
