// rms_norm_rows on CUDA (rms_norm_cuda.hpp): checks, the device guard and stream, the grad_w
// partial's size, and the partial's sum.
#include "train/rms_norm_cuda.hpp"

#include <ATen/ATen.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>

#include <algorithm>
#include <string>

#include "cuda/rms_norm_kernels.hpp"

namespace tokbench::train {
namespace {

cuda::RowType row_type(const at::Tensor& t) {
  TORCH_CHECK(t.scalar_type() == at::kFloat || t.scalar_type() == at::kBFloat16,
              "rms_norm_rows on CUDA: fp32 or bf16 expected, got ", t.scalar_type());
  return t.scalar_type() == at::kBFloat16 ? cuda::RowType::bf16 : cuda::RowType::f32;
}

void check(const std::string& launch) { TORCH_CHECK(launch.empty(), launch); }

}  // namespace

void rms_norm_cuda_forward(const at::Tensor& x2, const at::Tensor& scale, const at::Tensor& y, const at::Tensor& rstd,
                           double eps) {
  const c10::cuda::CUDAGuard guard(x2.device());  // the launch goes to x2's device, whatever is current
  const auto stream = at::cuda::getCurrentCUDAStream(x2.device().index());
  check(cuda::rms_norm_forward(row_type(x2), x2.data_ptr(), scale.data_ptr<float>(), y.data_ptr(),
                               rstd.data_ptr<float>(), x2.size(0), x2.size(1), static_cast<float>(eps),
                               stream.stream()));
}

at::Tensor rms_norm_cuda_backward(const at::Tensor& g, const at::Tensor& x2, const at::Tensor& scale,
                                  const at::Tensor& rstd, const at::Tensor& grad_x, bool want_weight) {
  const c10::cuda::CUDAGuard guard(x2.device());
  const auto stream = at::cuda::getCurrentCUDAStream(x2.device().index());
  const int64_t rows = x2.size(0), width = x2.size(1);
  // Two blocks per multiprocessor keep every one busy; fewer parts than that when rows are few,
  // so no block sums an empty range.
  const int64_t sms = at::cuda::getDeviceProperties(x2.device().index())->multiProcessorCount;
  const int64_t parts = std::max<int64_t>(1, std::min<int64_t>(2 * sms, rows));
  at::Tensor partial = want_weight ? at::empty({parts, width}, x2.options().dtype(at::kFloat)) : at::Tensor();
  check(cuda::rms_norm_backward(row_type(x2), g.data_ptr(), x2.data_ptr(), scale.data_ptr<float>(),
                                rstd.data_ptr<float>(), grad_x.data_ptr(),
                                want_weight ? partial.data_ptr<float>() : nullptr, parts, rows, width,
                                stream.stream()));
  return want_weight ? partial.sum(0) : at::Tensor();
}

}  // namespace tokbench::train
