// The element loops of swiglu (swiglu.hpp), compiled once per x86 vector ISA (swiglu_kernel.cpp
// with CPU_CAPABILITY = DEFAULT, AVX2, AVX512, like the cross-entropy row kernel). Plain
// pointers only: each ISA's copy lives in its own namespace and shares no inline code with
// the rest of the program.
#pragma once

#include <c10/util/BFloat16.h>

#include <cstdint>

namespace tokbench::train::swiglu_kernel {

// Over n elements, math in fp32 for bf16 too (each result rounded once):
// forward: y = silu(a) · b, silu(a) = a / (1 + exp(−a));
// backward: grad_a = g · b · σ(a) · (1 + a · (1 − σ(a))), grad_b = g · silu(a), with σ
// recomputed from a.
#define TOKBENCH_SWIGLU_KERNELS(isa)                                                                            \
  namespace isa {                                                                                              \
  void swiglu_forward(const float* a, const float* b, float* y, int64_t n);                                    \
  void swiglu_forward(const c10::BFloat16* a, const c10::BFloat16* b, c10::BFloat16* y, int64_t n);            \
  void swiglu_backward(const float* g, const float* a, const float* b, float* grad_a, float* grad_b, int64_t n); \
  void swiglu_backward(const c10::BFloat16* g, const c10::BFloat16* a, const c10::BFloat16* b,                 \
                       c10::BFloat16* grad_a, c10::BFloat16* grad_b, int64_t n);                               \
  }

TOKBENCH_SWIGLU_KERNELS(DEFAULT)
#if defined(__x86_64__)
TOKBENCH_SWIGLU_KERNELS(AVX2)
TOKBENCH_SWIGLU_KERNELS(AVX512)
#endif
#undef TOKBENCH_SWIGLU_KERNELS

}  // namespace tokbench::train::swiglu_kernel
