// add_rms_norm_rows and add_layer_norm_rows (add_norm_rows.hpp): argument checks and the
// two-output autograd functions around the CUDA launches (cuda_row_kernels.hpp), and the same
// steps as ATen operators on the CPU.
#include "train/add_norm_rows.hpp"

#include <ATen/ATen.h>
#include <torch/csrc/autograd/custom_function.h>

#include <optional>
#include <tuple>

#include "account/range_names.hpp"
#include "model/saved_data_keys.hpp"
#include "train/cuda_row_kernels.hpp"
#include "train/profile_trace.hpp"

namespace tokbench::train {

namespace sdk = model::saved_data_key;  // the keys of ctx->saved_data
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

class AddRmsNormRowsFunction : public torch::autograd::Function<AddRmsNormRowsFunction> {
 public:
  // -> {sum, y}
  static variable_list forward(AutogradContext* ctx, const at::Tensor& a, const at::Tensor& x,
                               const at::Tensor& weight, bool unit_offset, double eps) {
    TraceRange range(account::ranges::kRmsNormRows);  // named in profiles (a custom forward records no op)
    const int64_t width = weight.size(0);
    const auto a2 = a.contiguous().view({-1, width});  // (R, C)
    const auto x2 = x.contiguous().view({-1, width});  // (R, C)
    const int64_t rows = x2.size(0);
    // The effective scale in weight's dtype first (litgpt: 1 + weight), then fp32.
    const auto scale = (unit_offset ? 1 + weight : weight).to(at::kFloat).contiguous();  // (C)
    at::Tensor sum, y, rstd;
    if (x2.is_cuda()) {
      sum = at::empty_like(x2);
      y = at::empty_like(x2);
      rstd = at::empty({rows}, x2.options().dtype(at::kFloat));
      add_rms_norm_cuda_forward(a2, x2, scale, sum, y, rstd, eps);
    } else {
      sum = a2 + x2;  // rounded once to the storage type, as the kernel rounds it
      const auto sf = sum.to(at::kFloat);
      rstd = at::rsqrt((sf * sf).mean(1) + eps);  // (R)
      y = (sf * rstd.unsqueeze(1) * scale).to(x2.scalar_type());
    }
    ctx->save_for_backward({sum, scale, rstd});
    ctx->saved_data[sdk::x_sizes] = x.sizes().vec();
    ctx->saved_data[sdk::weight_dtype] = weight.scalar_type();
    return {sum.view(x.sizes()), y.view(x.sizes())};
  }

  // grad_outputs: {the sum's gradient (from the residual path), y's}. Returns one tensor for
  // both a and x.
  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    TraceRange range(account::ranges::kRmsNormRowsBackward);
    const auto saved = ctx->get_saved_variables();
    const auto& sum = saved[0];    // (R, C)
    const auto& scale = saved[1];  // (C) fp32
    const auto& rstd = saved[2];   // (R) fp32
    const int64_t rows = sum.size(0), width = sum.size(1);
    // Undefined gradients arrive as zeros (the function's default), so both are defined.
    const auto as_rows = [&](const at::Tensor& t) { return t.contiguous().view({rows, width}).to(sum.scalar_type()); };
    const auto grad_sum = as_rows(grad_outputs[0]);
    const auto g = as_rows(grad_outputs[1]);
    const bool want_weight = ctx->needs_input_grad(2);
    at::Tensor grad_input, grad_weight;  // grad_weight: an fp32 sum until cast below
    if (sum.is_cuda()) {
      grad_input = at::empty_like(sum);
      grad_weight = add_rms_norm_cuda_backward(g, grad_sum, sum, scale, rstd, grad_input, want_weight);
    } else {
      const auto gf = g.to(at::kFloat);
      const auto sf = sum.to(at::kFloat);
      const auto r = rstd.unsqueeze(1);
      const auto gw = gf * scale;
      const auto correction = r * r * (gw * sf).mean(1, true);
      grad_input = (r * (gw - sf * correction) + grad_sum.to(at::kFloat)).to(sum.scalar_type());
      if (want_weight) grad_weight = (gf * sf * r).sum(0);
    }
    if (want_weight) grad_weight = grad_weight.to(ctx->saved_data[sdk::weight_dtype].toScalarType());
    const auto grad = grad_input.view(ctx->saved_data[sdk::x_sizes].toIntVector());
    return {grad, grad, grad_weight, at::Tensor(), at::Tensor()};
  }
};

class AddLayerNormRowsFunction : public torch::autograd::Function<AddLayerNormRowsFunction> {
 public:
  // -> {sum, y}. weight, bias: each possibly absent (1 and 0); optional, because autograd takes
  // no undefined tensor as an input.
  static variable_list forward(AutogradContext* ctx, const at::Tensor& a, const at::Tensor& x,
                               const std::optional<at::Tensor>& weight_in, const std::optional<at::Tensor>& bias_in,
                               double eps) {
    const auto weight = weight_in.value_or(at::Tensor());
    const auto bias = bias_in.value_or(at::Tensor());
    TraceRange range(account::ranges::kLayerNormRows);  // named in profiles (a custom forward records no op)
    const int64_t width = x.size(-1);
    const auto a2 = a.contiguous().view({-1, width});  // (R, C)
    const auto x2 = x.contiguous().view({-1, width});  // (R, C)
    const int64_t rows = x2.size(0);
    const auto as_floats = [](const at::Tensor& t) { return t.defined() ? t.to(at::kFloat).contiguous() : t; };
    const auto w = as_floats(weight);  // (C) fp32 or undefined
    const auto b = as_floats(bias);    // (C) fp32 or undefined
    at::Tensor sum, y, mean, rstd;
    if (x2.is_cuda()) {
      sum = at::empty_like(x2);
      y = at::empty_like(x2);
      mean = at::empty({rows}, x2.options().dtype(at::kFloat));
      rstd = at::empty({rows}, x2.options().dtype(at::kFloat));
      add_layer_norm_cuda_forward(a2, x2, w, b, sum, y, mean, rstd, eps);
    } else {
      sum = a2 + x2;  // rounded once to the storage type, as the kernel rounds it
      const auto sf = sum.to(at::kFloat);
      mean = sf.mean(1);                                  // (R)
      const auto centered = sf - mean.unsqueeze(1);       // (R, C)
      rstd = at::rsqrt(centered.square().mean(1) + eps);  // (R)
      auto yf = centered * rstd.unsqueeze(1);
      if (w.defined()) yf = yf * w;
      if (b.defined()) yf = yf + b;
      y = yf.to(x2.scalar_type());
    }
    ctx->save_for_backward({sum, w, mean, rstd});
    ctx->saved_data[sdk::x_sizes] = x.sizes().vec();
    if (weight.defined()) ctx->saved_data[sdk::weight_dtype] = weight.scalar_type();
    if (bias.defined()) ctx->saved_data[sdk::bias_dtype] = bias.scalar_type();
    return {sum.view(x.sizes()), y.view(x.sizes())};
  }

  // grad_outputs: {the sum's gradient (from the residual path), y's}. Returns one tensor for
  // both a and x.
  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    TraceRange range(account::ranges::kLayerNormRowsBackward);
    const auto saved = ctx->get_saved_variables();
    const auto& sum = saved[0];   // (R, C)
    const auto& w = saved[1];     // (C) fp32, or undefined
    const auto& mean = saved[2];  // (R) fp32
    const auto& rstd = saved[3];  // (R) fp32
    const int64_t rows = sum.size(0), width = sum.size(1);
    // Undefined gradients arrive as zeros (the function's default), so both are defined.
    const auto as_rows = [&](const at::Tensor& t) { return t.contiguous().view({rows, width}).to(sum.scalar_type()); };
    const auto grad_sum = as_rows(grad_outputs[0]);
    const auto g = as_rows(grad_outputs[1]);
    // needs_input_grad counts the tensor inputs only: weight's is 2, bias's 2 or 3.
    const bool has_weight = ctx->saved_data.count(sdk::weight_dtype) > 0;
    const bool has_bias = ctx->saved_data.count(sdk::bias_dtype) > 0;
    const bool want_weight = has_weight && ctx->needs_input_grad(2);
    const bool want_bias = has_bias && ctx->needs_input_grad(has_weight ? 3 : 2);
    at::Tensor grad_input, grad_weight, grad_bias;  // grad_weight, grad_bias: fp32 sums until cast below
    if (sum.is_cuda()) {
      grad_input = at::empty_like(sum);
      std::tie(grad_weight, grad_bias) =
          add_layer_norm_cuda_backward(g, grad_sum, sum, w, mean, rstd, grad_input, want_weight, want_bias);
    } else {
      const auto gf = g.to(at::kFloat);
      const auto r = rstd.unsqueeze(1);
      const auto xhat = (sum.to(at::kFloat) - mean.unsqueeze(1)) * r;  // (R, C)
      const auto gw = w.defined() ? gf * w : gf;
      grad_input = (r * (gw - gw.mean(1, true) - xhat * (gw * xhat).mean(1, true)) + grad_sum.to(at::kFloat))
                       .to(sum.scalar_type());
      if (want_weight) grad_weight = (gf * xhat).sum(0);
      if (want_bias) grad_bias = gf.sum(0);
    }
    if (want_weight) grad_weight = grad_weight.to(ctx->saved_data[sdk::weight_dtype].toScalarType());
    if (want_bias) grad_bias = grad_bias.to(ctx->saved_data[sdk::bias_dtype].toScalarType());
    const auto grad = grad_input.view(ctx->saved_data[sdk::x_sizes].toIntVector());
    return {grad, grad, grad_weight, grad_bias, at::Tensor()};
  }
};

}  // namespace

std::pair<at::Tensor, at::Tensor> add_rms_norm_rows(const at::Tensor& a, const at::Tensor& x, const at::Tensor& weight,
                                                    bool unit_offset, double eps) {
  TORCH_CHECK((x.device().is_cpu() || x.device().is_cuda()) && a.device() == x.device() &&
                  weight.device() == x.device(),
              "add_rms_norm_rows: a, x and weight on one CPU or CUDA device expected, got a on ", a.device(),
              ", x on ", x.device(), ", weight on ", weight.device());
  TORCH_CHECK((x.scalar_type() == at::kFloat || x.scalar_type() == at::kBFloat16) &&
                  a.scalar_type() == x.scalar_type(),
              "add_rms_norm_rows: a and x of one dtype, fp32 or bf16, expected, got ", a.scalar_type(), " and ",
              x.scalar_type());
  TORCH_CHECK(weight.dim() == 1 && x.dim() >= 1 && a.sizes() == x.sizes() && x.size(-1) == weight.size(0),
              "add_rms_norm_rows: a ", a.sizes(), " and x ", x.sizes(), " of one shape ending in the width of weight ",
              weight.sizes(), " expected");
  auto outputs = AddRmsNormRowsFunction::apply(a, x, weight, unit_offset, eps);
  return {outputs[0], outputs[1]};
}

std::pair<at::Tensor, at::Tensor> add_layer_norm_rows(const at::Tensor& a, const at::Tensor& x,
                                                      const at::Tensor& weight, const at::Tensor& bias, double eps) {
  const auto on_x_device = [&](const at::Tensor& t) { return !t.defined() || t.device() == x.device(); };
  TORCH_CHECK((x.device().is_cpu() || x.device().is_cuda()) && a.device() == x.device() && on_x_device(weight) &&
                  on_x_device(bias),
              "add_layer_norm_rows: a, x, weight and bias on one CPU or CUDA device expected, got a on ", a.device(),
              ", x on ", x.device());
  TORCH_CHECK((x.scalar_type() == at::kFloat || x.scalar_type() == at::kBFloat16) &&
                  a.scalar_type() == x.scalar_type(),
              "add_layer_norm_rows: a and x of one dtype, fp32 or bf16, expected, got ", a.scalar_type(), " and ",
              x.scalar_type());
  const auto fits = [&](const at::Tensor& t) { return !t.defined() || (t.dim() == 1 && t.size(0) == x.size(-1)); };
  TORCH_CHECK(x.dim() >= 1 && a.sizes() == x.sizes() && fits(weight) && fits(bias), "add_layer_norm_rows: a ",
              a.sizes(), " and x ", x.sizes(), " of one shape ending in the width of weight and bias expected");
  const auto present = [](const at::Tensor& t) { return t.defined() ? std::optional<at::Tensor>(t) : std::nullopt; };
  auto outputs = AddLayerNormRowsFunction::apply(a, x, present(weight), present(bias), eps);
  return {outputs[0], outputs[1]};
}

}  // namespace tokbench::train
