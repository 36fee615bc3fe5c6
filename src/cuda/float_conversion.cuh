// The conversions every CUDA kernel of tokbench makes between a row's storage type (RowType,
// row_type.hpp: fp32 or bf16) and fp32, in which all of their arithmetic runs. bf16 is rounded to
// nearest even, as ATen's casts round it, so a kernel's bf16 output matches the ATen composition's.
#pragma once

#include <cuda_bf16.h>

namespace tokbench::cuda {

__device__ __forceinline__ float to_float(float v) { return v; }
__device__ __forceinline__ float to_float(__nv_bfloat16 v) { return __bfloat162float(v); }

template <typename T>
__device__ __forceinline__ T from_float(float v);
template <>
__device__ __forceinline__ float from_float<float>(float v) { return v; }
template <>
__device__ __forceinline__ __nv_bfloat16 from_float<__nv_bfloat16>(float v) { return __float2bfloat16_rn(v); }

}  // namespace tokbench::cuda
