// The conversions every CUDA kernel of tokbench makes between a row's storage type (RowType,
// row_type.hpp: fp32 or bf16) and fp32, in which all of their arithmetic runs. bf16 is rounded to
// nearest even, as ATen's casts round it, so a kernel's bf16 output matches the ATen composition's.
// Also the input of a norm with the residual add fused in front (both norms' kernels use it).
#pragma once

#include <cuda_bf16.h>

#include <cstdint>

namespace tokbench::cuda {

__device__ __forceinline__ float to_float(float v) { return v; }
__device__ __forceinline__ float to_float(__nv_bfloat16 v) { return __bfloat162float(v); }

template <typename T>
__device__ __forceinline__ T from_float(float v);
template <>
__device__ __forceinline__ float from_float<float>(float v) { return v; }
template <>
__device__ __forceinline__ __nv_bfloat16 from_float<__nv_bfloat16>(float v) { return __float2bfloat16_rn(v); }

// Column j of the row a norm reads: x's, or with `branch` (the residual add fused in front)
// branch + x rounded to T, as ATen's add rounds it. The norm kernels compute it from the inputs
// in each pass (later passes read them from cache) rather than reading back the sum they
// write, so no load ever sees memory the kernel writes.
template <typename T>
__device__ __forceinline__ float norm_input(const T* x_row, const T* branch_row, int64_t j) {
  if (branch_row == nullptr) return to_float(x_row[j]);
  return to_float(from_float<T>(to_float(branch_row[j]) + to_float(x_row[j])));
}

}  // namespace tokbench::cuda
