// The per-row bodies of rms_norm_rows (rms_norm_rows.hpp), compiled once per x86 vector ISA
// (rms_norm_rows_kernel.cpp with CPU_CAPABILITY = DEFAULT, AVX2, AVX512, like the
// cross-entropy row kernel), so one binary uses the widest vectors the machine has. Plain
// pointers only: each ISA's copy lives in its own namespace and shares no inline code with
// the rest of the program.
#pragma once

#include <c10/util/BFloat16.h>

#include <cstdint>

namespace tokbench::train::rms_norm_kernel {

// Forward of one row of C values: x (C) -> y (C) = x · rstd · weight, where weight (C) is the
// effective fp32 scale (1 + w under Gemma's unit offset) and rstd = 1 / sqrt(mean(x²) + eps)
// in fp32; returns rstd. scratch: (C) fp32 working space (bf16 only).
//
// Backward of one row: grad_x (C) = rstd · (g·w − x · rstd² · mean(g·w·x)), and, when
// grad_weight_sum is not null, grad_weight_sum (C) += g · x · rstd. scratch: (2C) fp32
// working space (bf16 only).
#define TOKBENCH_RMS_NORM_ROW_KERNELS(isa)                                                                        \
  namespace isa {                                                                                                \
  float rms_norm_forward_row(const float* x, const float* weight, float* y, int64_t width, float eps);          \
  float rms_norm_forward_row(const c10::BFloat16* x, const float* weight, c10::BFloat16* y, float* scratch,     \
                             int64_t width, float eps);                                                         \
  void rms_norm_backward_row(const float* g, const float* x, const float* weight, float rstd, float* grad_x,     \
                             float* grad_weight_sum, int64_t width);                                            \
  void rms_norm_backward_row(const c10::BFloat16* g, const c10::BFloat16* x, const float* weight, float rstd,    \
                             c10::BFloat16* grad_x, float* grad_weight_sum, float* scratch, int64_t width);     \
  }

TOKBENCH_RMS_NORM_ROW_KERNELS(DEFAULT)
#if defined(__x86_64__)
TOKBENCH_RMS_NORM_ROW_KERNELS(AVX2)
TOKBENCH_RMS_NORM_ROW_KERNELS(AVX512)
#endif
#undef TOKBENCH_RMS_NORM_ROW_KERNELS

}  // namespace tokbench::train::rms_norm_kernel
