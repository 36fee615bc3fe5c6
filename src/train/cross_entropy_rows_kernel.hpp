// The per-row body of cross_entropy_rows_in_place, compiled once per x86 vector ISA
// (cross_entropy_rows_kernel.cpp with CPU_CAPABILITY = DEFAULT, AVX2, AVX512, as ATen builds
// its own CPU kernels), so one binary uses the widest vectors the machine has. Plain
// pointers only: each ISA's copy lives in its own namespace and shares no inline code with
// the rest of the program.
#pragma once

#include <c10/util/BFloat16.h>

#include <cstdint>

namespace tokbench::train::cross_entropy_kernel {

// row: (V) logits, overwritten with the gradient; scratch: (V) fp32 working space (bf16
// only); softcap 0 = none. 0 <= target < V. Returns the row's loss.
#define TOKBENCH_CROSS_ENTROPY_ROW_KERNELS(isa)                                                              \
  namespace isa {                                                                                           \
  float cross_entropy_row(float* row, int64_t vocab, int64_t target, float softcap, float grad_scale);       \
  float cross_entropy_row(c10::BFloat16* row, float* scratch, int64_t vocab, int64_t target, float softcap, \
                          float grad_scale);                                                                \
  }

TOKBENCH_CROSS_ENTROPY_ROW_KERNELS(DEFAULT)
#if defined(__x86_64__)
TOKBENCH_CROSS_ENTROPY_ROW_KERNELS(AVX2)
TOKBENCH_CROSS_ENTROPY_ROW_KERNELS(AVX512)
#endif
#undef TOKBENCH_CROSS_ENTROPY_ROW_KERNELS

}  // namespace tokbench::train::cross_entropy_kernel
