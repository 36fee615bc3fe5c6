// The fused executor's row kernels on CUDA (cuda_row_kernels.hpp): argument checks, the device
// guard and stream, the grad_w partial's size, and the sums ATen finishes.
#include "train/cuda_row_kernels.hpp"

#include <ATen/ATen.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>

#include <algorithm>
#include <string>

#include "cuda/cross_entropy_kernels.hpp"
#include "cuda/rms_norm_kernels.hpp"

namespace tokbench::train {
namespace {

cuda::RowType row_type(const at::Tensor& t, const char* what) {
  TORCH_CHECK(t.scalar_type() == at::kFloat || t.scalar_type() == at::kBFloat16, what,
              " on CUDA: fp32 or bf16 expected, got ", t.scalar_type());
  return t.scalar_type() == at::kBFloat16 ? cuda::RowType::bf16 : cuda::RowType::f32;
}

void check(const std::string& launch) { TORCH_CHECK(launch.empty(), launch); }

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
  // Two blocks per multiprocessor keep every one busy; fewer parts than that when rows are few,
  // so no block sums an empty range.
  const int64_t sms = at::cuda::getDeviceProperties(x2.device().index())->multiProcessorCount;
  const int64_t parts = std::max<int64_t>(1, std::min<int64_t>(2 * sms, rows));
  at::Tensor partial = want_weight ? at::empty({parts, width}, x2.options().dtype(at::kFloat)) : at::Tensor();
  check(cuda::rms_norm_backward(row_type(x2, "rms_norm_rows"), g.data_ptr(), x2.data_ptr(), scale.data_ptr<float>(),
                                rstd.data_ptr<float>(), grad_x.data_ptr(),
                                want_weight ? partial.data_ptr<float>() : nullptr, parts, rows, width,
                                stream.stream()));
  return want_weight ? partial.sum(0) : at::Tensor();
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

}  // namespace tokbench::train
