// What the per-ISA row kernels (cross_entropy_rows_kernel.cpp, rms_norm_rows_kernel.cpp)
// share: ATen's float vector of the ISA being compiled and a walk over a row in vector-wide
// steps. Included only by files compiled with CPU_CAPABILITY; everything here has internal
// linkage, so no ISA's copy can stand in for another's (check_isa_object_symbols.cmake).
#pragma once

#include <ATen/cpu/vec/vec.h>

#include <cstdint>

#ifndef CPU_CAPABILITY
#error "row_kernel_vectors.hpp is for files compiled with CPU_CAPABILITY set to their ISA"
#endif

namespace tokbench::train::row_kernels::CPU_CAPABILITY {
namespace {

using Vec = at::vec::Vectorized<float>;

// Calls body(offset, count) over [0, length) in vector-wide steps, the last one short.
template <typename Body>
void for_each_vector(int64_t length, Body&& body) {
  constexpr int64_t lanes = Vec::size();
  int64_t i = 0;
  for (; i + lanes <= length; i += lanes) body(i, lanes);
  if (i < length) body(i, length - i);
}

}  // namespace
}  // namespace tokbench::train::row_kernels::CPU_CAPABILITY
