// What the residual add fused into RMSNorm or LayerNorm (add_norm_rows.hpp) is held to, on either
// device (test_add_norm_rows.cpp on the CPU, test_add_norm_cuda.cpp for the CUDA kernels): the
// unfused litgpt computation, `s = a + x` then the eager model's norm of s, and the harness that
// runs a candidate and that reference on the same inputs and gradients. Tolerances stay with
// each suite.
#pragma once

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <string>
#include <utility>
#include <vector>

#include "fixture_model.hpp"
#include "row_kernel_references.hpp"
#include "train/add_norm_rows.hpp"
#include "train/layer_norm_rows.hpp"
#include "train/rms_norm_rows.hpp"

namespace tokbench::train::testing {

// Which norm reads the sum: RMSNorm (weight; unit_offset applies), LayerNorm with weight and
// bias, or OLMo's LayerNorm without either.
enum class AddNormKind { rms, layer, layer_no_affine };

struct AddNormCase {
  torch::ScalarType dtype;
  std::vector<int64_t> shape;  // (A, B, C): A·B rows of width C
  bool unit_offset = false;
  bool transposed = false;  // a and x enter as a.transpose(0, 1), x.transpose(0, 1): not contiguous
  double eps = 1e-6;
  AddNormKind kind = AddNormKind::rms;
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

// The unfused reference with LayerNorm: (a + x, LayerNorm(a + x)), weight and bias each
// possibly undefined. fp32: exactly the eager model's operators (torch::layer_norm). bf16: the
// add as ATen rounds it, then the norm and every gradient in fp64, each rounded to bf16 once,
// as unfused_add_rms_norm's.
inline std::pair<torch::Tensor, torch::Tensor> unfused_add_layer_norm(const torch::Tensor& a, const torch::Tensor& x,
                                                                      const torch::Tensor& weight,
                                                                      const torch::Tensor& bias, double eps) {
  const auto in = [&](const torch::Tensor& t, torch::ScalarType dtype) { return t.defined() ? t.to(dtype) : t; };
  if (a.scalar_type() != torch::kBFloat16) {
    auto s = a + x;
    return {s, torch::layer_norm(s, {s.size(-1)}, weight, bias, eps)};
  }
  const auto s = (a + x).to(torch::kDouble);  // bf16 values, exact in fp64
  const auto y = torch::layer_norm(s, {s.size(-1)}, in(weight, torch::kDouble), in(bias, torch::kDouble), eps);
  return {s.to(a.scalar_type()), y.to(a.scalar_type())};
}

struct AddNormOutcome {
  torch::Tensor sum, y, grad_a, grad_x, grad_weight, grad_bias;  // on the CPU; undefined: no such parameter
};

// (sum, y) = f(a, x, weight, bias) on `device` and the gradients of Σ sum·g_sum + Σ y·g_y (both
// outputs carry a gradient, as in a block: the residual path and the MLP). weight is undefined
// for the LayerNorm without parameters, bias for all but the LayerNorm with them. Inputs drawn
// on the CPU from a fixed seed and copied, so every device and every f sees the same values.
template <typename AddNorm>
AddNormOutcome add_norm_outcome(const AddNormCase& c, const torch::Device& device, AddNorm&& f) {
  torch::manual_seed(23);
  const int64_t width = c.shape.back();
  const auto a0 = torch::randn(c.shape).to(c.dtype);
  const auto x0 = (torch::randn(c.shape) * 2 + 0.5).to(c.dtype);
  const auto w0 = ((c.unit_offset ? 0 : 1) + torch::randn({width}) * 0.2).to(c.dtype);
  const auto b0 = (torch::randn({width}) * 0.1).to(c.dtype);
  const std::vector<int64_t> out_shape =
      c.transposed ? std::vector<int64_t>{c.shape[1], c.shape[0], width} : c.shape;
  const auto g_sum = torch::randn(out_shape).to(c.dtype).to(torch::kFloat);
  const auto g_y = torch::randn(out_shape).to(c.dtype).to(torch::kFloat);
  auto a = a0.to(device).requires_grad_(true);
  auto x = x0.to(device).requires_grad_(true);
  auto weight = c.kind == AddNormKind::layer_no_affine ? torch::Tensor() : w0.to(device).requires_grad_(true);
  auto bias = c.kind == AddNormKind::layer ? b0.to(device).requires_grad_(true) : torch::Tensor();
  const auto [sum, y] =
      c.transposed ? f(a.transpose(0, 1), x.transpose(0, 1), weight, bias) : f(a, x, weight, bias);
  ((sum.to(torch::kFloat) * g_sum.to(device)).sum() + (y.to(torch::kFloat) * g_y.to(device)).sum()).backward();
  // Undefined where there is no such parameter or no gradient reached it (then a comparison fails).
  const auto grad_of = [](const torch::Tensor& p) {
    return p.defined() && p.grad().defined() ? p.grad().cpu() : torch::Tensor();
  };
  return {sum.detach().cpu(), y.detach().cpu(), a.grad().cpu(), x.grad().cpu(), grad_of(weight), grad_of(bias)};
}

// The unfused reference's outcome for case c, on the CPU.
inline AddNormOutcome unfused_add_norm_outcome(const AddNormCase& c) {
  return add_norm_outcome(c, torch::kCPU, [&](const auto& a, const auto& x, const auto& w, const auto& b) {
    return c.kind == AddNormKind::rms ? unfused_add_rms_norm(a, x, w, c.unit_offset, c.eps)
                                      : unfused_add_layer_norm(a, x, w, b, c.eps);
  });
}

// got equals want in every value and gradient within `tolerance` (relative norm), each named;
// a parameter gradient is compared where the reference has that parameter.
inline void expect_add_norm_close(const AddNormOutcome& got, const AddNormOutcome& want, double tolerance) {
  EXPECT_TRUE(close(got.sum, want.sum, tolerance)) << "sum";
  EXPECT_TRUE(close(got.y, want.y, tolerance)) << "norm";
  EXPECT_TRUE(close(got.grad_a, want.grad_a, tolerance)) << "grad a";
  EXPECT_TRUE(close(got.grad_x, want.grad_x, tolerance)) << "grad x";
  if (want.grad_weight.defined()) {
    EXPECT_TRUE(close(got.grad_weight, want.grad_weight, tolerance)) << "grad weight";
  }
  if (want.grad_bias.defined()) {
    EXPECT_TRUE(close(got.grad_bias, want.grad_bias, tolerance)) << "grad bias";
  }
}

// A fixture model's forward_hidden and gradients (fixture_model.hpp), fp32 on `device`; when
// `fused`, with add_rms_norm_rows and add_layer_norm_rows as the add-norm functions, rms_norm_rows
// for the other RMSNorms and layer_norm_rows for the other LayerNorms on CUDA (as the fused
// executor installs them), counting the add-norm calls.
inline std::pair<ModelOutcome, int> add_norm_model_outcome(const std::string& family, const torch::Device& device,
                                                           bool fused) {
  auto fixture = fixture_model(family, torch::kFloat, device);
  int calls = 0;
  if (fused) {
    fixture.gpt->set_norm_function(&rms_norm_rows);
    if (device.is_cuda()) fixture.gpt->set_layer_norm_function(&layer_norm_rows);
    fixture.gpt->set_add_norm_function([&calls](const torch::Tensor& a, const torch::Tensor& x,
                                                const torch::Tensor& w, bool unit_offset, double eps) {
      ++calls;
      return add_rms_norm_rows(a, x, w, unit_offset, eps);
    });
    fixture.gpt->set_add_layer_norm_function([&calls](const torch::Tensor& a, const torch::Tensor& x,
                                                      const torch::Tensor& w, const torch::Tensor& b, double eps) {
      ++calls;
      return add_layer_norm_rows(a, x, w, b, eps);
    });
  }
  return {forward_and_backward(fixture), calls};
}

// The adds a fused model computes with their norms: in each block the closing add with the next
// norm_1 (or ln_f after the last), plus norm_2's in a sequential block, where those norms exist.
inline int expected_fused_adds(const model::Config& c) {
  const int closing = 1 + (c.norm_1 ? static_cast<int>(c.n_layer) - 1 : 0);  // ln_f's, then each norm_1's
  const int second = !c.parallel_residual && c.norm_2 ? static_cast<int>(c.n_layer) : 0;
  return closing + second;
}

}  // namespace tokbench::train::testing
