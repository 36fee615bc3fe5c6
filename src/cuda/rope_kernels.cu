// The rotary embedding kernel (rope_kernels.hpp): a grid-stride loop over (row, item) with
// rows the (b, h, t) heads and D − n/2 items per row: item j < n/2 rotates the pair (j,
// j + n/2), reading both before writing either; the others copy one pass-through channel.
// The kernel's name says "elementwise", so that a profile's time account
// (account/op_rules.cpp) counts it with the ATen operators it replaces.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>

#include "cuda/rope_kernels.hpp"
#include "cuda/float_conversion.cuh"
#include "cuda/kernel_launch.cuh"

namespace tokbench::cuda {
namespace {

template <typename T>
__global__ void rope_elementwise_rotate(RopeShape shape, const T* __restrict__ x, const T* __restrict__ cos,
                                        const T* __restrict__ sin, T* __restrict__ y, bool inverse) {
  const int64_t half = shape.rotated / 2;
  const int64_t items = shape.head_size - half;  // per row: n/2 pairs, D − n copies
  const int64_t total = shape.batch * shape.heads * shape.time * items;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < total; i += stride) {
    const int64_t row = i / items;  // (b, h, t) in y's contiguous order
    const int64_t item = i - row * items;
    const int64_t t = row % shape.time;
    const int64_t h = (row / shape.time) % shape.heads;
    const int64_t b = row / (shape.time * shape.heads);
    const T* in = x + b * shape.stride_b + h * shape.stride_h + t * shape.stride_t;
    T* out = y + row * shape.head_size;
    if (item < half) {
      const int64_t j = item, k = item + half;
      const T* c = cos + t * shape.rotated;
      const T* s = sin + t * shape.rotated;
      const float a = to_float(in[j]), z = to_float(in[k]);
      if (inverse) {
        out[j] = from_float<T>(a * to_float(c[j]) + z * to_float(s[k]));
        out[k] = from_float<T>(z * to_float(c[k]) - a * to_float(s[j]));
      } else {
        out[j] = from_float<T>(a * to_float(c[j]) - z * to_float(s[j]));
        out[k] = from_float<T>(z * to_float(c[k]) + a * to_float(s[k]));
      }
    } else {
      const int64_t d = item + half;  // n ≤ d < D
      out[d] = in[d];
    }
  }
}

constexpr unsigned kThreads = 256;
constexpr int64_t kMaxBlocks = 65536;  // larger launches loop

}  // namespace

std::string rope_rotate(RowType type, const RopeShape& shape, const void* x, const void* cos, const void* sin,
                        void* y, bool inverse, void* stream) {
  if (shape.rotated <= 0 || shape.rotated % 2 != 0 || shape.rotated > shape.head_size)
    return "rope_rotate: the rotated channels must be even and within the head";
  const int64_t total = shape.batch * shape.heads * shape.time * (shape.head_size - shape.rotated / 2);
  if (total <= 0) return {};
  const auto s = static_cast<cudaStream_t>(stream);
  const dim3 grid(static_cast<unsigned>(std::min<int64_t>(kMaxBlocks, (total + kThreads - 1) / kThreads)));
  if (type == RowType::bf16) {
    using B = __nv_bfloat16;
    launch(rope_elementwise_rotate<B>, grid, kThreads, s, shape, static_cast<const B*>(x), static_cast<const B*>(cos),
           static_cast<const B*>(sin), static_cast<B*>(y), inverse);
  } else {
    launch(rope_elementwise_rotate<float>, grid, kThreads, s, shape, static_cast<const float*>(x),
           static_cast<const float*>(cos), static_cast<const float*>(sin), static_cast<float*>(y), inverse);
  }
  return launch_result("rope_rotate");
}

}  // namespace tokbench::cuda
