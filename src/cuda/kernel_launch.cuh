// What every row kernel's launcher shares (rms_norm, layer_norm, cross_entropy, gated
// activation, rope): the launch itself, the block size for a row's width, the grid's largest x
// dimension, and the launch's outcome as the text the host side reports ("" when it launched).
// One copy, so every kernel launches, sizes its blocks and words its errors the same way.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <limits>
#include <string>
#include <tuple>

namespace tokbench::cuda {

// Runs `kernel` over grid × block on `stream`, each argument converted to its parameter's type.
// Through the runtime's cudaLaunchKernel rather than the <<< >>> syntax, so the kernels' files
// are C++ to any compiler given a CUDA runtime header: tests/cuda_emulation compiles them with
// one that runs them on the CPU. The outcome is read by launch_result, as after <<< >>>.
template <typename... Params, typename... Args>
void launch(void (*kernel)(Params...), dim3 grid, dim3 block, cudaStream_t stream, Args... args) {
  static_assert(sizeof...(Params) == sizeof...(Args), "one argument per kernel parameter");
  std::tuple<Params...> values{static_cast<Params>(args)...};
  std::apply(
      [&](auto&... value) {
        void* pointers[] = {static_cast<void*>(&value)...};
        (void)cudaLaunchKernel(kernel, grid, block, pointers, 0, stream);
      },
      values);
}

// Wider rows get more threads, so each keeps a handful of values in flight. The row kernels
// declare kMaxRowThreads as their launch bound, so nvcc keeps their registers within what a
// block that wide may use (a launch above it would fail).
inline constexpr unsigned kMaxRowThreads = 512;
inline unsigned threads_for(int64_t width) { return width >= 4096 ? kMaxRowThreads : 256u; }

// The most blocks one launch's grid holds in x (a row per block must stay under it).
inline constexpr int64_t kMaxGrid = std::numeric_limits<int>::max();

// "" when the last launch on this thread succeeded, else "what: CUDA's error text".
inline std::string launch_result(const char* what) {
  const cudaError_t error = cudaGetLastError();
  return error == cudaSuccess ? std::string() : std::string(what) + ": " + cudaGetErrorString(error);
}

}  // namespace tokbench::cuda
