// What every row kernel's launcher shares (rms_norm, layer_norm, cross_entropy, gated
// activation, rope): the block size for a row's width, the grid's largest x dimension, and
// the launch's outcome as the text the host side reports ("" when it launched). One copy, so
// every kernel sizes its blocks and words its errors the same way.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <limits>
#include <string>

namespace tokbench::cuda {

// Wider rows get more threads, so each keeps a handful of values in flight.
inline unsigned threads_for(int64_t width) { return width >= 4096 ? 512u : 256u; }

// The most blocks one launch's grid holds in x (a row per block must stay under it).
inline constexpr int64_t kMaxGrid = std::numeric_limits<int>::max();

// "" when the last launch on this thread succeeded, else "what: CUDA's error text".
inline std::string launch_result(const char* what) {
  const cudaError_t error = cudaGetLastError();
  return error == cudaSuccess ? std::string() : std::string(what) + ": " + cudaGetErrorString(error);
}

}  // namespace tokbench::cuda
