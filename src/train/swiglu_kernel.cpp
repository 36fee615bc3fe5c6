// SwiGLU's element loops with ATen's Vectorized<float> (exp is its SLEEF routine, and
// silu's formula is ATen's, so fp32 results round as torch::silu's do). Built once per ISA
// with CPU_CAPABILITY set (src/train/CMakeLists.txt). bf16 inputs are widened a block at a
// time into stack buffers, so nothing is allocated.
#include "train/swiglu_kernel.hpp"

#include <ATen/cpu/vec/functional.h>
#include <ATen/cpu/vec/vec.h>

#ifndef CPU_CAPABILITY
#error "swiglu_kernel.cpp is compiled with CPU_CAPABILITY set to its ISA"
#endif

namespace tokbench::train::swiglu_kernel::CPU_CAPABILITY {
namespace {

using Vec = at::vec::Vectorized<float>;

// Elements widened to fp32 at a time on the bf16 paths: three 2 KiB buffers stay in L1.
constexpr int64_t kBlock = 512;

template <typename Body>
void for_each_vector(int64_t n, Body&& body) {
  constexpr int64_t lanes = Vec::size();
  int64_t i = 0;
  for (; i + lanes <= n; i += lanes) body(i, lanes);
  if (i < n) body(i, n - i);
}

// y may alias a or b.
void forward_fp32(const float* a, const float* b, float* y, int64_t n) {
  const Vec one(1.0f);
  for_each_vector(n, [&](int64_t i, int64_t k) {
    const Vec av = Vec::loadu(a + i, k);
    const Vec silu = av / (one + av.neg().exp());
    (silu * Vec::loadu(b + i, k)).store(y + i, k);
  });
}

// grad_a and grad_b may alias g, a or b.
void backward_fp32(const float* g, const float* a, const float* b, float* grad_a, float* grad_b, int64_t n) {
  const Vec one(1.0f);
  for_each_vector(n, [&](int64_t i, int64_t k) {
    const Vec gv = Vec::loadu(g + i, k), av = Vec::loadu(a + i, k), bv = Vec::loadu(b + i, k);
    const Vec denominator = one + av.neg().exp();
    const Vec sigmoid = one / denominator;
    (gv * bv * sigmoid * (one + av * (one - sigmoid))).store(grad_a + i, k);
    (gv * (av / denominator)).store(grad_b + i, k);
  });
}

}  // namespace

void swiglu_forward(const float* a, const float* b, float* y, int64_t n) { forward_fp32(a, b, y, n); }

void swiglu_forward(const c10::BFloat16* a, const c10::BFloat16* b, c10::BFloat16* y, int64_t n) {
  float a32[kBlock], b32[kBlock];
  for (int64_t start = 0; start < n; start += kBlock) {
    const int64_t count = n - start < kBlock ? n - start : kBlock;
    at::vec::convert(a + start, a32, count);
    at::vec::convert(b + start, b32, count);
    forward_fp32(a32, b32, a32, count);
    at::vec::convert(a32, y + start, count);
  }
}

void swiglu_backward(const float* g, const float* a, const float* b, float* grad_a, float* grad_b, int64_t n) {
  backward_fp32(g, a, b, grad_a, grad_b, n);
}

void swiglu_backward(const c10::BFloat16* g, const c10::BFloat16* a, const c10::BFloat16* b, c10::BFloat16* grad_a,
                     c10::BFloat16* grad_b, int64_t n) {
  float g32[kBlock], a32[kBlock], b32[kBlock];
  for (int64_t start = 0; start < n; start += kBlock) {
    const int64_t count = n - start < kBlock ? n - start : kBlock;
    at::vec::convert(g + start, g32, count);
    at::vec::convert(a + start, a32, count);
    at::vec::convert(b + start, b32, count);
    backward_fp32(g32, a32, b32, a32, b32, count);  // a32 ← grad_a, b32 ← grad_b
    at::vec::convert(a32, grad_a + start, count);
    at::vec::convert(b32, grad_b + start, count);
  }
}

}  // namespace tokbench::train::swiglu_kernel::CPU_CAPABILITY
