// CUDA's bf16 type and the two conversions tokbench's kernels make, on the CPU (see
// cuda_runtime.h beside it): the same 16 bits as ATen's BFloat16, rounded to nearest even.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

struct __nv_bfloat16 {
  std::uint16_t bits;
};

inline float __bfloat162float(__nv_bfloat16 value) {
  const std::uint32_t wide = static_cast<std::uint32_t>(value.bits) << 16;
  float f;
  std::memcpy(&f, &wide, sizeof f);
  return f;
}

inline __nv_bfloat16 __float2bfloat16_rn(float value) {
  if (std::isnan(value)) return {0x7fc0};
  std::uint32_t wide;
  std::memcpy(&wide, &value, sizeof wide);
  wide += 0x7fffu + ((wide >> 16) & 1u);  // to nearest, ties to the even one
  return {static_cast<std::uint16_t>(wide >> 16)};
}
