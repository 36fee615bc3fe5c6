// The cross-entropy row kernel (cross_entropy_kernels.hpp): one block per row. Each thread
// keeps a running maximum m and a sum s of exp(z − m) over its strided share of the row,
// rescaling s when m grows; the block combines the threads' (m, s) pairs; the second pass
// writes the gradient. Reductions run in a fixed order for a given vocabulary size.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cmath>

#include "cuda/cross_entropy_kernels.hpp"
#include "cuda/float_conversion.cuh"
#include "cuda/kernel_launch.cuh"

namespace tokbench::cuda {
namespace {

__device__ __forceinline__ void store(float* p, float v) { *p = v; }
__device__ __forceinline__ void store(__nv_bfloat16* p, float v) { *p = __float2bfloat16_rn(v); }

// A running (maximum, Σ exp(z − maximum)); the empty one is (−inf, 0).
struct MaxSum {
  float max;
  float sum;
};

__device__ __forceinline__ MaxSum combine(MaxSum a, MaxSum b) {
  const float m = fmaxf(a.max, b.max);
  if (m == -INFINITY) return {m, 0.0f};  // both empty: exp(−inf − (−inf)) would be NaN
  return {m, a.sum * expf(a.max - m) + b.sum * expf(b.max - m)};
}

// The block's combined pair, returned to every thread (blockDim.x a multiple of 32).
__device__ MaxSum block_combine(MaxSum value, MaxSum* shared) {
  for (int offset = 16; offset > 0; offset >>= 1)
    value = combine(value, {__shfl_xor_sync(0xffffffffu, value.max, offset),
                            __shfl_xor_sync(0xffffffffu, value.sum, offset)});
  const int lane = threadIdx.x & 31;
  const int warp = threadIdx.x >> 5;
  if (lane == 0) shared[warp] = value;
  __syncthreads();
  if (warp == 0) {
    value = lane < static_cast<int>(blockDim.x >> 5) ? shared[lane] : MaxSum{-INFINITY, 0.0f};
    for (int offset = 16; offset > 0; offset >>= 1)
      value = combine(value, {__shfl_xor_sync(0xffffffffu, value.max, offset),
                              __shfl_xor_sync(0xffffffffu, value.sum, offset)});
    if (lane == 0) shared[0] = value;
  }
  __syncthreads();
  const MaxSum total = shared[0];
  __syncthreads();
  return total;
}

// Large vocabularies (litgpt's run from 32k to 262k) take a full block per row; the kernel's
// launch bound keeps its registers within what a block that wide may use.
constexpr unsigned kLargeVocabThreads = 1024;

template <typename T>
__global__ void __launch_bounds__(kLargeVocabThreads)
cross_entropy_rows_kernel(T* __restrict__ logits, const int64_t* __restrict__ targets,
                          float* __restrict__ losses, const float* __restrict__ scale_of,
                          int64_t vocab, float softcap) {
  __shared__ MaxSum shared[32];
  const int64_t row = blockIdx.x;
  T* x = logits + row * vocab;
  const int64_t target = targets[row];
  if (target < 0 || target >= vocab) {  // ignored (−1) or out of range: no gradient
    for (int64_t j = threadIdx.x; j < vocab; j += blockDim.x) store(x + j, 0.0f);
    if (threadIdx.x == 0) losses[row] = target == -1 ? 0.0f : __int_as_float(0x7fc00000)  /* NaN */;
    return;
  }
  const bool capped = softcap > 0.0f;
  const float inv_cap = capped ? 1.0f / softcap : 0.0f;
  auto z_of = [&](int64_t j) {
    const float v = to_float(x[j]);
    return capped ? softcap * tanhf(v * inv_cap) : v;
  };
  MaxSum mine{-INFINITY, 0.0f};
  for (int64_t j = threadIdx.x; j < vocab; j += blockDim.x) {
    const float z = z_of(j);
    if (z > mine.max) {
      mine.sum = mine.sum * expf(mine.max - z) + 1.0f;  // exp(−inf) = 0 for the first value
      mine.max = z;
    } else {
      mine.sum += expf(z - mine.max);
    }
  }
  const MaxSum row_stats = block_combine(mine, shared);
  const float z_target = z_of(target);  // every thread reads it before anyone overwrites the row
  __syncthreads();
  const float scale = *scale_of;
  const float softmax_scale = scale / row_stats.sum;
  for (int64_t j = threadIdx.x; j < vocab; j += blockDim.x) {
    const float z = z_of(j);
    float g = expf(z - row_stats.max) * softmax_scale - (j == target ? scale : 0.0f);
    if (capped) {
      const float t = z * inv_cap;
      g *= 1.0f - t * t;
    }
    store(x + j, g);
  }
  if (threadIdx.x == 0) losses[row] = row_stats.max + logf(row_stats.sum) - z_target;
}

}  // namespace

std::string cross_entropy_rows_in_place(RowType type, void* logits, const int64_t* targets, float* losses,
                                        const float* scale, int64_t rows, int64_t vocab, float softcap,
                                        void* stream) {
  if (rows <= 0) return {};
  if (vocab <= 0) return "cross_entropy_rows_in_place: the vocabulary is empty";
  if (rows > kMaxGrid) return "cross_entropy_rows_in_place: more rows than one launch's grid holds";
  const unsigned threads = vocab >= 16384 ? kLargeVocabThreads : 256u;
  const auto s = static_cast<cudaStream_t>(stream);
  const dim3 grid(static_cast<unsigned>(rows));
  if (type == RowType::bf16)
    launch(cross_entropy_rows_kernel<__nv_bfloat16>, grid, threads, s, static_cast<__nv_bfloat16*>(logits), targets,
           losses, scale, vocab, softcap);
  else
    launch(cross_entropy_rows_kernel<float>, grid, threads, s, static_cast<float*>(logits), targets, losses, scale,
           vocab, softcap);
  return launch_result("cross_entropy_rows_in_place");
}

}  // namespace tokbench::cuda
