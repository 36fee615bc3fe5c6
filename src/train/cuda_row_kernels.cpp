// The fused executor's row kernels on CUDA (cuda_row_kernels.hpp): argument checks, the device
// guard and stream, the grad_w partial's size, and the sums ATen finishes.
#include "train/cuda_row_kernels.hpp"

#include <ATen/ATen.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>

#include <algorithm>
#include <string>

#include "cuda/cross_entropy_kernels.hpp"
#include "cuda/gated_activation_kernels.hpp"
#include "cuda/layer_norm_kernels.hpp"
#include "cuda/rms_norm_kernels.hpp"
#include "cuda/rope_kernels.hpp"

namespace tokbench::train {
namespace {

cuda::RowType row_type(const at::Tensor& t, const char* what) {
  TORCH_CHECK(t.scalar_type() == at::kFloat || t.scalar_type() == at::kBFloat16, what,
              " on CUDA: fp32 or bf16 expected, got ", t.scalar_type());
  return t.scalar_type() == at::kBFloat16 ? cuda::RowType::bf16 : cuda::RowType::f32;
}

void check(const std::string& launch) { TORCH_CHECK(launch.empty(), launch); }

// Parts of a backward's weight-gradient sums: two blocks per multiprocessor keep every one
// busy; fewer parts than that when rows are few, so no block sums an empty range.
int64_t backward_parts(const at::Tensor& x2) {
  const int64_t sms = at::cuda::getDeviceProperties(x2.device().index())->multiProcessorCount;
  return std::max<int64_t>(1, std::min<int64_t>(2 * sms, x2.size(0)));
}

// An optional fp32 operand's pointer: null where the tensor is undefined (the kernels read
// that as "absent").
float* optional_floats(const at::Tensor& t) { return t.defined() ? t.data_ptr<float>() : nullptr; }

// A backward's weight-gradient partials: `parts` rows of fp32 sums the kernel fills, one per
// block, that sum_parts finishes; undefined where that gradient is not wanted (the kernel reads
// a null pointer as "skip").
at::Tensor partial_sums(const at::Tensor& like, int64_t parts, bool wanted) {
  return wanted ? at::empty({parts, like.size(1)}, like.options().dtype(at::kFloat)) : at::Tensor();
}

at::Tensor sum_parts(const at::Tensor& partial) { return partial.defined() ? partial.sum(0) : at::Tensor(); }

cuda::GateActivation kernel_activation(model::GateActivation activation) {
  switch (activation) {
    case model::GateActivation::silu: return cuda::GateActivation::silu;
    case model::GateActivation::gelu: return cuda::GateActivation::gelu;
    case model::GateActivation::gelu_tanh: return cuda::GateActivation::gelu_tanh;
  }
  TORCH_CHECK(false, "gated_activation: unknown activation");
}

}  // namespace

void rms_norm_cuda_forward(const at::Tensor& x2, const at::Tensor& scale, const at::Tensor& y, const at::Tensor& rstd,
                           double eps) {
  const c10::cuda::CUDAGuard guard(x2.device());  // the launch goes to x2's device, whatever is current
  const auto stream = at::cuda::getCurrentCUDAStream(x2.device().index());
  check(cuda::rms_norm_forward(row_type(x2, "rms_norm_rows"), x2.data_ptr(), scale.data_ptr<float>(), y.data_ptr(),
                               rstd.data_ptr<float>(), x2.size(0), x2.size(1), static_cast<float>(eps),
                               stream.stream()));
}

at::Tensor rms_norm_cuda_backward(const at::Tensor& g, const at::Tensor& x2, const at::Tensor& scale,
                                  const at::Tensor& rstd, const at::Tensor& grad_x, bool want_weight) {
  const c10::cuda::CUDAGuard guard(x2.device());
  const auto stream = at::cuda::getCurrentCUDAStream(x2.device().index());
  const int64_t rows = x2.size(0), width = x2.size(1);
  const int64_t parts = backward_parts(x2);
  const at::Tensor partial = partial_sums(x2, parts, want_weight);
  check(cuda::rms_norm_backward(row_type(x2, "rms_norm_rows"), g.data_ptr(), x2.data_ptr(), scale.data_ptr<float>(),
                                rstd.data_ptr<float>(), grad_x.data_ptr(), optional_floats(partial), parts, rows, width,
                                stream.stream()));
  return sum_parts(partial);
}

void add_rms_norm_cuda_forward(const at::Tensor& a2, const at::Tensor& x2, const at::Tensor& scale,
                               const at::Tensor& sum, const at::Tensor& y, const at::Tensor& rstd, double eps) {
  const c10::cuda::CUDAGuard guard(x2.device());  // the launch goes to x2's device, whatever is current
  const auto stream = at::cuda::getCurrentCUDAStream(x2.device().index());
  check(cuda::add_rms_norm_forward(row_type(x2, "add_rms_norm_rows"), a2.data_ptr(), x2.data_ptr(),
                                   scale.data_ptr<float>(), sum.data_ptr(), y.data_ptr(), rstd.data_ptr<float>(),
                                   x2.size(0), x2.size(1), static_cast<float>(eps), stream.stream()));
}

at::Tensor add_rms_norm_cuda_backward(const at::Tensor& g, const at::Tensor& grad_sum, const at::Tensor& sum2,
                                      const at::Tensor& scale, const at::Tensor& rstd, const at::Tensor& grad_input,
                                      bool want_weight) {
  const c10::cuda::CUDAGuard guard(sum2.device());
  const auto stream = at::cuda::getCurrentCUDAStream(sum2.device().index());
  const int64_t rows = sum2.size(0), width = sum2.size(1);
  const int64_t parts = backward_parts(sum2);
  const at::Tensor partial = partial_sums(sum2, parts, want_weight);
  check(cuda::add_rms_norm_backward(row_type(sum2, "add_rms_norm_rows"), g.data_ptr(), grad_sum.data_ptr(),
                                    sum2.data_ptr(), scale.data_ptr<float>(), rstd.data_ptr<float>(),
                                    grad_input.data_ptr(), optional_floats(partial), parts, rows, width,
                                    stream.stream()));
  return sum_parts(partial);
}

void layer_norm_cuda_forward(const at::Tensor& x2, const at::Tensor& weight, const at::Tensor& bias,
                             const at::Tensor& y, const at::Tensor& mean, const at::Tensor& rstd, double eps) {
  const c10::cuda::CUDAGuard guard(x2.device());  // the launch goes to x2's device, whatever is current
  const auto stream = at::cuda::getCurrentCUDAStream(x2.device().index());
  check(cuda::layer_norm_forward(row_type(x2, "layer_norm_rows"), x2.data_ptr(), weight.data_ptr<float>(),
                                 bias.data_ptr<float>(), y.data_ptr(), mean.data_ptr<float>(), rstd.data_ptr<float>(),
                                 x2.size(0), x2.size(1), static_cast<float>(eps), stream.stream()));
}

std::pair<at::Tensor, at::Tensor> layer_norm_cuda_backward(const at::Tensor& g, const at::Tensor& x2,
                                                           const at::Tensor& weight, const at::Tensor& mean,
                                                           const at::Tensor& rstd, const at::Tensor& grad_x,
                                                           bool want_weight, bool want_bias) {
  const c10::cuda::CUDAGuard guard(x2.device());
  const auto stream = at::cuda::getCurrentCUDAStream(x2.device().index());
  const int64_t rows = x2.size(0), width = x2.size(1);
  const int64_t parts = backward_parts(x2);
  const at::Tensor weight_partial = partial_sums(x2, parts, want_weight);
  const at::Tensor bias_partial = partial_sums(x2, parts, want_bias);
  check(cuda::layer_norm_backward(row_type(x2, "layer_norm_rows"), g.data_ptr(), x2.data_ptr(),
                                  weight.data_ptr<float>(), mean.data_ptr<float>(), rstd.data_ptr<float>(),
                                  grad_x.data_ptr(), optional_floats(weight_partial), optional_floats(bias_partial),
                                  parts, rows, width, stream.stream()));
  return {sum_parts(weight_partial), sum_parts(bias_partial)};
}

void add_layer_norm_cuda_forward(const at::Tensor& a2, const at::Tensor& x2, const at::Tensor& weight,
                                 const at::Tensor& bias, const at::Tensor& sum, const at::Tensor& y,
                                 const at::Tensor& mean, const at::Tensor& rstd, double eps) {
  const c10::cuda::CUDAGuard guard(x2.device());  // the launch goes to x2's device, whatever is current
  const auto stream = at::cuda::getCurrentCUDAStream(x2.device().index());
  check(cuda::add_layer_norm_forward(row_type(x2, "add_layer_norm_rows"), a2.data_ptr(), x2.data_ptr(),
                                     optional_floats(weight), optional_floats(bias), sum.data_ptr(), y.data_ptr(),
                                     mean.data_ptr<float>(), rstd.data_ptr<float>(), x2.size(0), x2.size(1),
                                     static_cast<float>(eps), stream.stream()));
}

std::pair<at::Tensor, at::Tensor> add_layer_norm_cuda_backward(const at::Tensor& g, const at::Tensor& grad_sum,
                                                               const at::Tensor& sum2, const at::Tensor& weight,
                                                               const at::Tensor& mean, const at::Tensor& rstd,
                                                               const at::Tensor& grad_input, bool want_weight,
                                                               bool want_bias) {
  const c10::cuda::CUDAGuard guard(sum2.device());
  const auto stream = at::cuda::getCurrentCUDAStream(sum2.device().index());
  const int64_t rows = sum2.size(0), width = sum2.size(1);
  const int64_t parts = backward_parts(sum2);
  const at::Tensor weight_partial = partial_sums(sum2, parts, want_weight);
  const at::Tensor bias_partial = partial_sums(sum2, parts, want_bias);
  check(cuda::add_layer_norm_backward(row_type(sum2, "add_layer_norm_rows"), g.data_ptr(), grad_sum.data_ptr(),
                                      sum2.data_ptr(), optional_floats(weight), mean.data_ptr<float>(),
                                      rstd.data_ptr<float>(), grad_input.data_ptr(), optional_floats(weight_partial),
                                      optional_floats(bias_partial), parts, rows, width, stream.stream()));
  return {sum_parts(weight_partial), sum_parts(bias_partial)};
}

at::Tensor cross_entropy_rows_cuda_in_place(const at::Tensor& logits, const at::Tensor& targets,
                                            std::optional<double> softcap, const at::Tensor& grad_scale) {
  TORCH_CHECK(logits.is_cuda() && logits.dim() == 2 && logits.is_contiguous(),
              "cross_entropy_rows on CUDA: contiguous (R, V) CUDA logits expected, got ", logits.sizes(), " on ",
              logits.device());
  TORCH_CHECK(targets.device() == logits.device() && targets.scalar_type() == at::kLong && targets.dim() == 1 &&
                  targets.size(0) == logits.size(0),
              "cross_entropy_rows on CUDA: int64 targets (", logits.size(0), ") on ", logits.device(), " expected");
  TORCH_CHECK(grad_scale.device() == logits.device() && grad_scale.scalar_type() == at::kFloat &&
                  grad_scale.numel() == 1,
              "cross_entropy_rows on CUDA: a one-element fp32 gradient scale on the logits' device expected");
  const c10::cuda::CUDAGuard guard(logits.device());
  const auto stream = at::cuda::getCurrentCUDAStream(logits.device().index());
  const auto contiguous_targets = targets.contiguous();
  auto losses = at::empty({logits.size(0)}, logits.options().dtype(at::kFloat));
  check(cuda::cross_entropy_rows_in_place(row_type(logits, "cross_entropy_rows"), logits.data_ptr(),
                                          contiguous_targets.data_ptr<int64_t>(), losses.data_ptr<float>(),
                                          grad_scale.data_ptr<float>(), logits.size(0), logits.size(1),
                                          softcap ? static_cast<float>(*softcap) : 0.0f, stream.stream()));
  return losses;
}

void gated_activation_cuda_forward(const at::Tensor& gate, const at::Tensor& up, const at::Tensor& h,
                                   model::GateActivation activation) {
  const c10::cuda::CUDAGuard guard(gate.device());
  const auto stream = at::cuda::getCurrentCUDAStream(gate.device().index());
  check(cuda::gated_activation_forward(row_type(gate, "gated_activation"), kernel_activation(activation),
                                       gate.data_ptr(), up.data_ptr(), h.data_ptr(), gate.numel(), stream.stream()));
}

void gated_activation_cuda_backward(const at::Tensor& grad_h, const at::Tensor& gate, const at::Tensor& up,
                                    const at::Tensor& grad_gate, const at::Tensor& grad_up,
                                    model::GateActivation activation) {
  const c10::cuda::CUDAGuard guard(gate.device());
  const auto stream = at::cuda::getCurrentCUDAStream(gate.device().index());
  check(cuda::gated_activation_backward(row_type(gate, "gated_activation"), kernel_activation(activation),
                                        grad_h.data_ptr(), gate.data_ptr(), up.data_ptr(), grad_gate.data_ptr(),
                                        grad_up.data_ptr(), gate.numel(), stream.stream()));
}

void rope_cuda_rotate(const at::Tensor& x, const at::Tensor& cos, const at::Tensor& sin, const at::Tensor& y,
                      bool inverse) {
  const c10::cuda::CUDAGuard guard(x.device());
  const auto stream = at::cuda::getCurrentCUDAStream(x.device().index());
  const cuda::RopeShape shape{x.size(0),   x.size(1),   x.size(2),   x.size(3),
                              x.stride(0), x.stride(1), x.stride(2), cos.size(1)};
  check(cuda::rope_rotate(row_type(x, "rope_rotation"), shape, x.data_ptr(), cos.data_ptr(), sin.data_ptr(),
                          y.data_ptr(), inverse, stream.stream()));
}

}  // namespace tokbench::train
