// What the residual add fused into RMSNorm (add_norm_rows.hpp) is held to, on either device
// (test_add_norm_rows.cpp on the CPU, test_add_norm_cuda.cpp for the CUDA kernels): the unfused
// litgpt computation, `s = a + x` then the eager model's RMSNorm of s, and the harness that runs
// a candidate and that reference on the same inputs and gradients. Tolerances stay with each
// suite.
#pragma once

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <string>
#include <utility>
#include <vector>

#include "fixture_model.hpp"
#include "row_kernel_references.hpp"
#include "train/add_norm_rows.hpp"
#include "train/rms_norm_rows.hpp"

namespace tokbench::train::testing {

struct AddNormCase {
  torch::ScalarType dtype;
  std::vector<int64_t> shape;  // (A, B, C): A·B rows of width C
  bool unit_offset = false;
  bool transposed = false;  // a and x enter as a.transpose(0, 1), x.transpose(0, 1): not contiguous
  double eps = 1e-6;
};

// The unfused reference on a and x of one dtype: (a + x, RMSNorm(a + x)). fp32: exactly the
// eager model's operators (aten_rms_norm). bf16: the add as ATen rounds it, then the norm and,
// through autograd, every gradient in fp64, each rounded to bf16 once (the sum's two incoming
// gradients, from the residual path and from the norm, are added in fp64 before that rounding,
// where the eager model rounds each first).
inline std::pair<torch::Tensor, torch::Tensor> unfused_add_rms_norm(const torch::Tensor& a, const torch::Tensor& x,
                                                                    const torch::Tensor& weight, bool unit_offset,
                                                                    double eps) {
  if (a.scalar_type() != torch::kBFloat16) {
    auto s = a + x;
    return {s, aten_rms_norm(s, weight, unit_offset, eps)};
  }
  const auto s = (a + x).to(torch::kDouble);  // bf16 values, exact in fp64
  const auto scale = (unit_offset ? 1 + weight : weight).to(torch::kDouble);
  const auto y = s * torch::rsqrt((s * s).mean(-1, /*keepdim=*/true) + eps) * scale;
  return {s.to(a.scalar_type()), y.to(a.scalar_type())};
}

struct AddNormOutcome {
  torch::Tensor sum, y, grad_a, grad_x, grad_weight;  // on the CPU
};

// (sum, y) = f(a, x, weight) on `device` and the gradients of Σ sum·g_sum + Σ y·g_y (both outputs
// carry a gradient, as in a block: the residual path and the MLP). Inputs drawn on the CPU from
// a fixed seed and copied, so every device and every f sees the same values.
template <typename AddNorm>
AddNormOutcome add_norm_outcome(const AddNormCase& c, const torch::Device& device, AddNorm&& f) {
  torch::manual_seed(23);
  const int64_t width = c.shape.back();
  const auto a0 = torch::randn(c.shape).to(c.dtype);
  const auto x0 = (torch::randn(c.shape) * 2 + 0.5).to(c.dtype);
  const auto w0 = ((c.unit_offset ? 0 : 1) + torch::randn({width}) * 0.2).to(c.dtype);
  const std::vector<int64_t> out_shape =
      c.transposed ? std::vector<int64_t>{c.shape[1], c.shape[0], width} : c.shape;
  const auto g_sum = torch::randn(out_shape).to(c.dtype).to(torch::kFloat);
  const auto g_y = torch::randn(out_shape).to(c.dtype).to(torch::kFloat);
  auto a = a0.to(device).requires_grad_(true);
  auto x = x0.to(device).requires_grad_(true);
  auto weight = w0.to(device).requires_grad_(true);
  const auto [sum, y] = c.transposed ? f(a.transpose(0, 1), x.transpose(0, 1), weight) : f(a, x, weight);
  ((sum.to(torch::kFloat) * g_sum.to(device)).sum() + (y.to(torch::kFloat) * g_y.to(device)).sum()).backward();
  return {sum.detach().cpu(), y.detach().cpu(), a.grad().cpu(), x.grad().cpu(), weight.grad().cpu()};
}

// The unfused reference's outcome for case c, on the CPU.
inline AddNormOutcome unfused_add_norm_outcome(const AddNormCase& c) {
  return add_norm_outcome(c, torch::kCPU, [&](const auto& a, const auto& x, const auto& w) {
    return unfused_add_rms_norm(a, x, w, c.unit_offset, c.eps);
  });
}

// got equals want in every value and gradient within `tolerance` (relative norm), each named.
inline void expect_add_norm_close(const AddNormOutcome& got, const AddNormOutcome& want, double tolerance) {
  EXPECT_TRUE(close(got.sum, want.sum, tolerance)) << "sum";
  EXPECT_TRUE(close(got.y, want.y, tolerance)) << "norm";
  EXPECT_TRUE(close(got.grad_a, want.grad_a, tolerance)) << "grad a";
  EXPECT_TRUE(close(got.grad_x, want.grad_x, tolerance)) << "grad x";
  EXPECT_TRUE(close(got.grad_weight, want.grad_weight, tolerance)) << "grad weight";
}

// A fixture model's forward_hidden and gradients (fixture_model.hpp), fp32 on `device`; with
// add_rms_norm_rows as the add-norm function and rms_norm_rows for the other norms (as the fused
// executor installs them) when `fused`, counting the add-norm calls.
inline std::pair<ModelOutcome, int> add_norm_model_outcome(const std::string& family, const torch::Device& device,
                                                           bool fused) {
  auto fixture = fixture_model(family, torch::kFloat, device);
  int calls = 0;
  if (fused) {
    fixture.gpt->set_norm_function(&rms_norm_rows);
    fixture.gpt->set_add_norm_function([&calls](const torch::Tensor& a, const torch::Tensor& x,
                                                const torch::Tensor& w, bool unit_offset, double eps) {
      ++calls;
      return add_rms_norm_rows(a, x, w, unit_offset, eps);
    });
  }
  return {forward_and_backward(fixture), calls};
}

}  // namespace tokbench::train::testing
