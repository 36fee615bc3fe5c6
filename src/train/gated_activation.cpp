// gated_activation (gated_activation.hpp): argument checks and the autograd function around
// the CUDA launches (cuda_row_kernels.hpp).
#include "train/gated_activation.hpp"

#include <ATen/ATen.h>
#include <torch/csrc/autograd/custom_function.h>

#include "model/saved_data_keys.hpp"
#include "train/cuda_row_kernels.hpp"

namespace tokbench::train {

namespace sdk = model::saved_data_key;  // the keys of ctx->saved_data
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

class GatedActivationFunction : public torch::autograd::Function<GatedActivationFunction> {
 public:
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& gate, const at::Tensor& up, int64_t activation) {
    const auto g = gate.contiguous(), u = up.contiguous();
    auto h = at::empty_like(g);
    gated_activation_cuda_forward(g, u, h, static_cast<model::GateActivation>(activation));
    ctx->save_for_backward({g, u});  // act(gate) is recomputed in backward, not kept
    ctx->saved_data[sdk::activation] = activation;
    return h;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    const auto saved = ctx->get_saved_variables();
    const auto& g = saved[0];
    const auto& u = saved[1];
    const auto grad_h = grad_outputs[0].to(g.scalar_type()).contiguous();
    auto grad_gate = at::empty_like(g), grad_up = at::empty_like(u);
    gated_activation_cuda_backward(grad_h, g, u, grad_gate, grad_up,
                                   static_cast<model::GateActivation>(ctx->saved_data[sdk::activation].toInt()));
    return {grad_gate, grad_up, at::Tensor()};
  }
};

}  // namespace

at::Tensor gated_activation(const at::Tensor& gate, const at::Tensor& up, model::GateActivation activation) {
  TORCH_CHECK(gate.scalar_type() == up.scalar_type() &&
                  (gate.scalar_type() == at::kFloat || gate.scalar_type() == at::kBFloat16),
              "gated_activation: gate and up of one dtype, fp32 or bf16, expected, got ", gate.scalar_type(), " and ",
              up.scalar_type());
  TORCH_CHECK(gate.sizes() == up.sizes(), "gated_activation: gate ", gate.sizes(), " and up ", up.sizes(),
              " differ in shape");
  TORCH_CHECK(gate.is_cuda() && up.device() == gate.device(),
              "gated_activation: gate and up on one CUDA device expected (the CPU keeps ATen's silu/gelu and mul), "
              "got gate on ",
              gate.device(), ", up on ", up.device());
  return GatedActivationFunction::apply(gate, up, static_cast<int64_t>(activation));
}

}  // namespace tokbench::train
