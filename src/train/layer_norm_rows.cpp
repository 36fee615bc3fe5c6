// layer_norm_rows (layer_norm_rows.hpp): argument checks and the autograd function around the
// CUDA launches (cuda_row_kernels.hpp), and the same two passes as ATen operators on the CPU.
#include "train/layer_norm_rows.hpp"

#include <ATen/ATen.h>
#include <torch/csrc/autograd/custom_function.h>

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

class LayerNormRowsFunction : public torch::autograd::Function<LayerNormRowsFunction> {
 public:
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& x, const at::Tensor& weight,
                            const at::Tensor& bias, double eps) {
    TraceRange range(account::ranges::kLayerNormRows);  // named in profiles (a custom forward records no op)
    const int64_t width = weight.size(0);
    const auto x2 = x.contiguous().view({-1, width});  // (R, C)
    const int64_t rows = x2.size(0);
    const auto w = weight.to(at::kFloat).contiguous();  // (C) fp32
    const auto b = bias.to(at::kFloat).contiguous();    // (C) fp32
    at::Tensor y, mean, rstd;
    if (x2.is_cuda()) {
      y = at::empty_like(x2);
      mean = at::empty({rows}, x2.options().dtype(at::kFloat));
      rstd = at::empty({rows}, x2.options().dtype(at::kFloat));
      layer_norm_cuda_forward(x2, w, b, y, mean, rstd, eps);
    } else {
      const auto xf = x2.to(at::kFloat);
      mean = xf.mean(1);                                  // (R)
      const auto centered = xf - mean.unsqueeze(1);       // (R, C)
      rstd = at::rsqrt(centered.square().mean(1) + eps);  // (R)
      y = (centered * rstd.unsqueeze(1) * w + b).to(x2.scalar_type());
    }
    ctx->save_for_backward({x2, w, mean, rstd});
    ctx->saved_data[sdk::x_sizes] = x.sizes().vec();
    ctx->saved_data[sdk::weight_dtype] = weight.scalar_type();
    ctx->saved_data[sdk::bias_dtype] = bias.scalar_type();
    return y.view(x.sizes());
  }

  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    TraceRange range(account::ranges::kLayerNormRowsBackward);
    const auto saved = ctx->get_saved_variables();
    const auto& x2 = saved[0];    // (R, C)
    const auto& w = saved[1];     // (C) fp32
    const auto& mean = saved[2];  // (R) fp32
    const auto& rstd = saved[3];  // (R) fp32
    const int64_t rows = x2.size(0), width = x2.size(1);
    const auto g = grad_outputs[0].contiguous().view({rows, width}).to(x2.scalar_type());
    const bool want_weight = ctx->needs_input_grad(1), want_bias = ctx->needs_input_grad(2);
    at::Tensor grad_x, grad_weight, grad_bias;  // grad_weight, grad_bias: fp32 sums until cast below
    if (x2.is_cuda()) {
      grad_x = at::empty_like(x2);
      std::tie(grad_weight, grad_bias) =
          layer_norm_cuda_backward(g, x2, w, mean, rstd, grad_x, want_weight, want_bias);
    } else {
      const auto gf = g.to(at::kFloat);
      const auto r = rstd.unsqueeze(1);
      const auto xhat = (x2.to(at::kFloat) - mean.unsqueeze(1)) * r;  // (R, C)
      const auto gw = gf * w;
      grad_x = (r * (gw - gw.mean(1, true) - xhat * (gw * xhat).mean(1, true))).to(x2.scalar_type());
      if (want_weight) grad_weight = (gf * xhat).sum(0);
      if (want_bias) grad_bias = gf.sum(0);
    }
    if (want_weight) grad_weight = grad_weight.to(ctx->saved_data[sdk::weight_dtype].toScalarType());
    if (want_bias) grad_bias = grad_bias.to(ctx->saved_data[sdk::bias_dtype].toScalarType());
    return {grad_x.view(ctx->saved_data[sdk::x_sizes].toIntVector()), grad_weight, grad_bias, at::Tensor()};
  }
};

}  // namespace

at::Tensor layer_norm_rows(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias, double eps) {
  TORCH_CHECK(weight.defined() && bias.defined(),
              "layer_norm_rows: a weight and a bias expected (a LayerNorm without them keeps torch::layer_norm)");
  TORCH_CHECK((x.device().is_cpu() || x.device().is_cuda()) && weight.device() == x.device() &&
                  bias.device() == x.device(),
              "layer_norm_rows: x, weight and bias on one CPU or CUDA device expected, got x on ", x.device(),
              ", weight on ", weight.device(), ", bias on ", bias.device());
  TORCH_CHECK(x.scalar_type() == at::kFloat || x.scalar_type() == at::kBFloat16,
              "layer_norm_rows: fp32 or bf16 x expected, got ", x.scalar_type());
  TORCH_CHECK(weight.dim() == 1 && bias.sizes() == weight.sizes() && x.dim() >= 1 && x.size(-1) == weight.size(0),
              "layer_norm_rows: x ", x.sizes(), " does not end in the width of weight ", weight.sizes(), " and bias ",
              bias.sizes());
  return LayerNormRowsFunction::apply(x, weight, bias, eps);
}

}  // namespace tokbench::train
