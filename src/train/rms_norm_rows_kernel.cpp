// One row's RMSNorm forward and backward with ATen's Vectorized<float>. Built once per ISA
// with CPU_CAPABILITY set (src/train/CMakeLists.txt); tails use the masked load/store of the
// same width, whose missing lanes load as zero and so add nothing to the row sums.
#include "train/rms_norm_rows_kernel.hpp"

#include <ATen/cpu/vec/functional.h>

#include <cmath>

#include "train/row_kernel_vectors.hpp"

#ifndef CPU_CAPABILITY
#error "rms_norm_rows_kernel.cpp is compiled with CPU_CAPABILITY set to its ISA"
#endif

namespace tokbench::train::rms_norm_kernel::CPU_CAPABILITY {
namespace {

using row_kernels::CPU_CAPABILITY::for_each_vector;
using row_kernels::CPU_CAPABILITY::Vec;

float sum_of_lanes(const Vec& v) {
  return at::vec::vec_reduce_all<float>([](Vec& a, Vec& b) { return a + b; }, v);
}

// y may alias x. The op order is litgpt's (x · rstd, then · weight) so fp32 results round
// as the eager module's do.
float forward_fp32(const float* x, const float* weight, float* y, int64_t width, float eps) {
  Vec squares(0.0f);
  for_each_vector(width, [&](int64_t i, int64_t n) {
    const Vec v = Vec::loadu(x + i, n);
    squares = squares + v * v;
  });
  const float mean_square = sum_of_lanes(squares) / static_cast<float>(width);
  const float rstd = 1.0f / std::sqrt(mean_square + eps);
  const Vec r(rstd);
  for_each_vector(width, [&](int64_t i, int64_t n) {
    ((Vec::loadu(x + i, n) * r) * Vec::loadu(weight + i, n)).store(y + i, n);
  });
  return rstd;
}

// grad_x may alias g (each vector is read before it is written).
void backward_fp32(const float* g, const float* x, const float* weight, float rstd, float* grad_x,
                   float* grad_weight_sum, int64_t width) {
  const Vec r(rstd);
  Vec dot(0.0f);
  for_each_vector(width, [&](int64_t i, int64_t n) {
    const Vec gv = Vec::loadu(g + i, n), xv = Vec::loadu(x + i, n);
    dot = dot + gv * Vec::loadu(weight + i, n) * xv;
    if (grad_weight_sum != nullptr) (Vec::loadu(grad_weight_sum + i, n) + gv * (xv * r)).store(grad_weight_sum + i, n);
  });
  const Vec correction(rstd * rstd * sum_of_lanes(dot) / static_cast<float>(width));
  for_each_vector(width, [&](int64_t i, int64_t n) {
    const Vec gv = Vec::loadu(g + i, n), xv = Vec::loadu(x + i, n);
    (r * (gv * Vec::loadu(weight + i, n) - xv * correction)).store(grad_x + i, n);
  });
}

}  // namespace

float rms_norm_forward_row(const float* x, const float* weight, float* y, int64_t width, float eps) {
  return forward_fp32(x, weight, y, width, eps);
}

float rms_norm_forward_row(const c10::BFloat16* x, const float* weight, c10::BFloat16* y, float* scratch,
                           int64_t width, float eps) {
  at::vec::convert(x, scratch, width);
  const float rstd = forward_fp32(scratch, weight, scratch, width, eps);
  at::vec::convert(scratch, y, width);  // rounds to nearest even, as at::Tensor::to
  return rstd;
}

void rms_norm_backward_row(const float* g, const float* x, const float* weight, float rstd, float* grad_x,
                           float* grad_weight_sum, int64_t width) {
  backward_fp32(g, x, weight, rstd, grad_x, grad_weight_sum, width);
}

void rms_norm_backward_row(const c10::BFloat16* g, const c10::BFloat16* x, const float* weight, float rstd,
                           c10::BFloat16* grad_x, float* grad_weight_sum, float* scratch, int64_t width) {
  float* g32 = scratch;
  float* x32 = scratch + width;
  at::vec::convert(g, g32, width);
  at::vec::convert(x, x32, width);
  backward_fp32(g32, x32, weight, rstd, g32, grad_weight_sum, width);
  at::vec::convert(g32, grad_x, width);
}

}  // namespace tokbench::train::rms_norm_kernel::CPU_CAPABILITY
