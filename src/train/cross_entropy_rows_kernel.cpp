// One logit row's cross-entropy and gradient with ATen's Vectorized<float> (exp and tanh are
// its SLEEF routines). Built once per ISA with CPU_CAPABILITY set (src/train/CMakeLists.txt),
// which makes Vectorized as wide as that ISA; tails use the masked load/store of the same
// width, so every element takes the same arithmetic.
#include "train/cross_entropy_rows_kernel.hpp"

#include <ATen/cpu/vec/functional.h>

#include <cmath>
#include <limits>

#include "train/row_kernel_vectors.hpp"

#ifndef CPU_CAPABILITY
#error "cross_entropy_rows_kernel.cpp is compiled with CPU_CAPABILITY set to its ISA"
#endif

namespace tokbench::train::cross_entropy_kernel::CPU_CAPABILITY {
namespace {

using row_kernels::CPU_CAPABILITY::for_each_vector;
using row_kernels::CPU_CAPABILITY::Vec;

// s: (V) fp32 logits, overwritten in place with the gradient. The three passes of the
// header's contract; the row is in the core's cache after the first.
float fp32_row(float* s, int64_t vocab, int64_t target, float softcap, float grad_scale) {
  const float inf = std::numeric_limits<float>::infinity();
  // Pass 1: soft-cap in place (z = c·tanh(x / c)) and the row maximum.
  const Vec cap(softcap), inv_cap(softcap > 0 ? 1.0f / softcap : 0.0f);
  Vec max_vec(-inf);
  for_each_vector(vocab, [&](int64_t i, int64_t n) {
    Vec z = Vec::loadu(s + i, n);
    if (softcap > 0) {
      z = (z * inv_cap).tanh() * cap;
      z.store(s + i, n);
    }
    max_vec = at::vec::maximum(max_vec, n == Vec::size() ? z : Vec::set(Vec(-inf), z, n));
  });
  const float max = at::vec::vec_reduce_all<float>([](Vec& a, Vec& b) { return at::vec::maximum(a, b); }, max_vec);
  const float z_target = s[target];

  // Pass 2: e = exp(z − max), summed; stores e · dz/dx (1 − (z / c)² under soft-capping), so
  // the scale pass below needs nothing else. Partial sums go to double every block.
  constexpr int64_t kVectorsPerBlock = 256;
  const Vec max_splat(max), one(1.0f);
  Vec partial(0.0f);
  double sum = 0.0;
  int64_t in_block = 0;
  for_each_vector(vocab, [&](int64_t i, int64_t n) {
    const Vec z = Vec::loadu(s + i, n);
    const Vec e = (z - max_splat).exp();
    partial = partial + (n == Vec::size() ? e : Vec::set(Vec(0.0f), e, n));
    if (softcap > 0) {
      const Vec t = z * inv_cap;
      (e * (one - t * t)).store(s + i, n);
    } else {
      e.store(s + i, n);
    }
    if (++in_block == kVectorsPerBlock) {
      sum += at::vec::vec_reduce_all<float>([](Vec& a, Vec& b) { return a + b; }, partial);
      partial = Vec(0.0f);
      in_block = 0;
    }
  });
  sum += at::vec::vec_reduce_all<float>([](Vec& a, Vec& b) { return a + b; }, partial);

  // Pass 3: softmax · grad_scale (· dz/dx), then the target's −grad_scale (· dz/dx).
  const Vec scale(static_cast<float>(grad_scale / sum));
  for_each_vector(vocab, [&](int64_t i, int64_t n) { (Vec::loadu(s + i, n) * scale).store(s + i, n); });
  const float t = softcap > 0 ? z_target / softcap : 0.0f;
  s[target] -= grad_scale * (1.0f - t * t);
  return static_cast<float>(static_cast<double>(max) + std::log(sum) - static_cast<double>(z_target));
}

}  // namespace

float cross_entropy_row(float* row, int64_t vocab, int64_t target, float softcap, float grad_scale) {
  return fp32_row(row, vocab, target, softcap, grad_scale);
}

float cross_entropy_row(c10::BFloat16* row, float* scratch, int64_t vocab, int64_t target, float softcap,
                        float grad_scale) {
  at::vec::convert(row, scratch, vocab);
  const float loss = fp32_row(scratch, vocab, target, softcap, grad_scale);
  at::vec::convert(scratch, row, vocab);  // rounds to nearest even, as at::Tensor::to
  return loss;
}

}  // namespace tokbench::train::cross_entropy_kernel::CPU_CAPABILITY
