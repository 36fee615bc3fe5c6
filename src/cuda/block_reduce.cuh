// The block-wide fp32 sum the row kernels reduce with (RMSNorm's and LayerNorm's statistics and
// backward dot products): one copy for every kernel that needs it, so they all sum in the same
// fixed order (the same inputs and width give the same bits).
#pragma once

#include <cuda_runtime.h>

namespace tokbench::cuda {

// The sum of every thread's `value` over the block (blockDim.x a multiple of 32, at most 1024),
// returned to every thread: warps reduce by shuffles, warp 0 reduces the warps' sums. `shared`
// holds 32 floats; the trailing barrier lets the next call reuse it. Every thread of the block
// must call it (it has barriers).
__device__ __forceinline__ float block_sum(float value, float* shared) {
  for (int offset = 16; offset > 0; offset >>= 1) value += __shfl_xor_sync(0xffffffffu, value, offset);
  const int lane = threadIdx.x & 31;
  const int warp = threadIdx.x >> 5;
  if (lane == 0) shared[warp] = value;
  __syncthreads();
  if (warp == 0) {
    value = lane < static_cast<int>(blockDim.x >> 5) ? shared[lane] : 0.0f;
    for (int offset = 16; offset > 0; offset >>= 1) value += __shfl_xor_sync(0xffffffffu, value, offset);
    if (lane == 0) shared[0] = value;
  }
  __syncthreads();
  const float total = shared[0];
  __syncthreads();
  return total;
}

}  // namespace tokbench::cuda
