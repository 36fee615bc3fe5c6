// rope_rotation (rope_rotation.hpp): argument checks, cos and sin brought to (T, n) rows in
// x's dtype, and the autograd function around the CUDA launch (cuda_row_kernels.hpp).
#include "train/rope_rotation.hpp"

#include <ATen/ATen.h>
#include <torch/csrc/autograd/custom_function.h>

#include "train/cuda_row_kernels.hpp"

namespace tokbench::train {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// The kernel reads heads whose last dimension is contiguous; other layouts are copied first.
at::Tensor last_dim_contiguous(const at::Tensor& t) { return t.stride(-1) == 1 ? t : t.contiguous(); }

class RopeRotationFunction : public torch::autograd::Function<RopeRotationFunction> {
 public:
  // cos, sin: (T, n) contiguous in x's dtype.
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& x, const at::Tensor& cos, const at::Tensor& sin) {
    const auto in = last_dim_contiguous(x);
    auto y = at::empty(in.sizes(), in.options().memory_format(at::MemoryFormat::Contiguous));
    rope_cuda_rotate(in, cos, sin, y, /*inverse=*/false);
    ctx->save_for_backward({cos, sin});
    return y;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    const auto saved = ctx->get_saved_variables();
    const auto& cos = saved[0];
    const auto g = last_dim_contiguous(grad_outputs[0].to(cos.scalar_type()));
    auto grad_x = at::empty(g.sizes(), g.options().memory_format(at::MemoryFormat::Contiguous));
    rope_cuda_rotate(g, cos, saved[1], grad_x, /*inverse=*/true);
    return {grad_x, at::Tensor(), at::Tensor()};
  }
};

// (1, T, n) or (T, n) -> (T, n) contiguous in `dtype`.
at::Tensor table(const at::Tensor& t, at::ScalarType dtype) {
  return (t.dim() == 3 ? t.squeeze(0) : t).to(dtype).contiguous();
}

}  // namespace

at::Tensor rope_rotation(const at::Tensor& x, const at::Tensor& cos, const at::Tensor& sin) {
  TORCH_CHECK(x.scalar_type() == at::kFloat || x.scalar_type() == at::kBFloat16,
              "rope_rotation: fp32 or bf16 x expected, got ", x.scalar_type());
  TORCH_CHECK(x.dim() == 4, "rope_rotation: x (B, H, T, D) expected, got ", x.sizes());
  TORCH_CHECK(cos.sizes() == sin.sizes() && (cos.dim() == 2 || (cos.dim() == 3 && cos.size(0) == 1)),
              "rope_rotation: cos and sin of one shape, (1, T, n) or (T, n), expected, got ", cos.sizes(), " and ",
              sin.sizes());
  const int64_t T = cos.size(-2), n = cos.size(-1);
  TORCH_CHECK(T == x.size(2), "rope_rotation: cos and sin have ", T, " positions, x ", x.size(2));
  TORCH_CHECK(n >= 0 && n % 2 == 0 && n <= x.size(3), "rope_rotation: the rotated channels (", n,
              ") must be even and within the head size (", x.size(3), ")");
  TORCH_CHECK(x.is_cuda() && cos.device() == x.device() && sin.device() == x.device(),
              "rope_rotation: x, cos and sin on one CUDA device expected (the CPU keeps ATen's rope), got x on ",
              x.device(), ", cos on ", cos.device(), ", sin on ", sin.device());
  if (n == 0) return x;  // rotary_percentage 0: nothing rotates
  return RopeRotationFunction::apply(x, table(cos, x.scalar_type()), table(sin, x.scalar_type()));
}

}  // namespace tokbench::train
