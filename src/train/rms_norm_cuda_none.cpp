// rms_norm_cuda.hpp for builds without CUDA: rms_norm_rows never gets a CUDA tensor there
// (LibTorch has no CUDA device to make one), so these only say why they cannot run.
#include "train/rms_norm_cuda.hpp"

#include <c10/util/Exception.h>

namespace tokbench::train {

void rms_norm_cuda_forward(const at::Tensor&, const at::Tensor&, const at::Tensor&, const at::Tensor&, double) {
  TORCH_CHECK(false, "rms_norm_rows: this build has no CUDA kernels (built without nvcc)");
}

at::Tensor rms_norm_cuda_backward(const at::Tensor&, const at::Tensor&, const at::Tensor&, const at::Tensor&,
                                  const at::Tensor&, bool) {
  TORCH_CHECK(false, "rms_norm_rows: this build has no CUDA kernels (built without nvcc)");
}

}  // namespace tokbench::train
