// cuda_row_kernels.hpp for builds without CUDA: no CUDA tensor reaches these there (LibTorch
// has no CUDA device to make one), so they only say why they cannot run.
#include "train/cuda_row_kernels.hpp"

#include <c10/util/Exception.h>

namespace tokbench::train {

void rms_norm_cuda_forward(const at::Tensor&, const at::Tensor&, const at::Tensor&, const at::Tensor&, double) {
  TORCH_CHECK(false, "rms_norm_rows: this build has no CUDA kernels (built without nvcc)");
}

at::Tensor rms_norm_cuda_backward(const at::Tensor&, const at::Tensor&, const at::Tensor&, const at::Tensor&,
                                  const at::Tensor&, bool) {
  TORCH_CHECK(false, "rms_norm_rows: this build has no CUDA kernels (built without nvcc)");
}

void add_rms_norm_cuda_forward(const at::Tensor&, const at::Tensor&, const at::Tensor&, const at::Tensor&,
                               const at::Tensor&, const at::Tensor&, double) {
  TORCH_CHECK(false, "add_rms_norm_rows: this build has no CUDA kernels (built without nvcc)");
}

at::Tensor add_rms_norm_cuda_backward(const at::Tensor&, const at::Tensor&, const at::Tensor&, const at::Tensor&,
                                      const at::Tensor&, const at::Tensor&, bool) {
  TORCH_CHECK(false, "add_rms_norm_rows: this build has no CUDA kernels (built without nvcc)");
}

void layer_norm_cuda_forward(const at::Tensor&, const at::Tensor&, const at::Tensor&, const at::Tensor&,
                             const at::Tensor&, const at::Tensor&, double) {
  TORCH_CHECK(false, "layer_norm_rows: this build has no CUDA kernels (built without nvcc)");
}

std::pair<at::Tensor, at::Tensor> layer_norm_cuda_backward(const at::Tensor&, const at::Tensor&, const at::Tensor&,
                                                           const at::Tensor&, const at::Tensor&, const at::Tensor&,
                                                           bool, bool) {
  TORCH_CHECK(false, "layer_norm_rows: this build has no CUDA kernels (built without nvcc)");
}

void add_layer_norm_cuda_forward(const at::Tensor&, const at::Tensor&, const at::Tensor&, const at::Tensor&,
                                 const at::Tensor&, const at::Tensor&, const at::Tensor&, const at::Tensor&, double) {
  TORCH_CHECK(false, "add_layer_norm_rows: this build has no CUDA kernels (built without nvcc)");
}

std::pair<at::Tensor, at::Tensor> add_layer_norm_cuda_backward(const at::Tensor&, const at::Tensor&,
                                                               const at::Tensor&, const at::Tensor&,
                                                               const at::Tensor&, const at::Tensor&,
                                                               const at::Tensor&, bool, bool) {
  TORCH_CHECK(false, "add_layer_norm_rows: this build has no CUDA kernels (built without nvcc)");
}

at::Tensor cross_entropy_rows_cuda_in_place(const at::Tensor&, const at::Tensor&, std::optional<double>,
                                            const at::Tensor&) {
  TORCH_CHECK(false, "cross_entropy_rows: this build has no CUDA kernels (built without nvcc)");
}

void gated_activation_cuda_forward(const at::Tensor&, const at::Tensor&, const at::Tensor&, model::GateActivation) {
  TORCH_CHECK(false, "gated_activation: this build has no CUDA kernels (built without nvcc)");
}

void gated_activation_cuda_backward(const at::Tensor&, const at::Tensor&, const at::Tensor&, const at::Tensor&,
                                    const at::Tensor&, model::GateActivation) {
  TORCH_CHECK(false, "gated_activation: this build has no CUDA kernels (built without nvcc)");
}

void rope_cuda_rotate(const at::Tensor&, const at::Tensor&, const at::Tensor&, const at::Tensor&, bool) {
  TORCH_CHECK(false, "rope_rotation: this build has no CUDA kernels (built without nvcc)");
}

}  // namespace tokbench::train
