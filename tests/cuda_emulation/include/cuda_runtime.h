// The part of CUDA's runtime header that tokbench's kernels (src/cuda/*.cu) use, emulated on the
// CPU, so that their own source runs in CI on a machine without a GPU (docs/cuda-emulation.md).
// The kernel files are compiled as C++ with this folder ahead of every other include path; they
// launch through cudaLaunchKernel (kernel_launch.cuh), which here runs every block of the grid,
// one after another, and every thread of a block as a fiber on the calling thread
// (emulated_grid.cpp). What it emulates:
// - threadIdx, blockIdx, blockDim and gridDim, one-dimensional blocks of 1 to 1024 threads;
// - __syncthreads() over the whole block, and __shfl_xor_sync over a whole warp of 32;
// - static __shared__ arrays (one block runs at a time, so one copy serves every block);
// - the single-precision functions the kernels call, from the C library.
// What it checks, failing the launch with the reason as its error text: a __syncthreads() that
// not every thread of the block reaches, or that some reach after others returned; a shuffle
// not every lane of the warp takes part in, or with a partial mask or width.
// The order threads and blocks run in is a setting (thread_order.hpp), so that the tests can
// find races as results that change with it. What it cannot show: speed; a block wider than a
// kernel's __launch_bounds__ (ignored here, refused by a GPU); shared memory read before it is
// written (it keeps the last block's values); the GPU's own rounding of expf and friends
// (glibc's differ by an ulp or so, within every test's tolerance).
#pragma once

#include <math.h>  // expf, logf, tanhf, erff, fmaxf in the global namespace, as in device code

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <type_traits>
#include <utility>

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __shared__ static
#define __launch_bounds__(...)

struct uint3 {
  unsigned x = 0, y = 0, z = 0;
};

struct dim3 {
  unsigned x, y, z;
  constexpr dim3(unsigned x_ = 1, unsigned y_ = 1, unsigned z_ = 1) : x(x_), y(y_), z(z_) {}
};

struct CUstream_st;
using cudaStream_t = CUstream_st*;

enum cudaError_t { cudaSuccess = 0, cudaErrorInvalidConfiguration = 9, cudaErrorLaunchFailure = 719 };

// The running thread's coordinates, set by the scheduler before it resumes a thread.
inline uint3 threadIdx;
inline uint3 blockIdx;
inline dim3 blockDim;
inline dim3 gridDim;

namespace cuda_emulation {

// Runs `kernel_call` as every thread of every block of grid × block; cudaSuccess, or the error
// whose text cudaGetErrorString then gives (also kept for cudaGetLastError).
cudaError_t run_grid(dim3 grid, dim3 block, std::size_t dynamic_shared_bytes, const std::function<void()>& kernel_call);
void sync_threads();
std::uint32_t shuffle_xor(unsigned mask, std::uint32_t bits, int lane_mask, int width);
// The text of the last failed launch on this thread ("" after a successful one).
const char* last_failure();

template <typename... Params, std::size_t... I>
void call_with(void (*kernel)(Params...), void** args, std::index_sequence<I...>) {
  kernel(*static_cast<std::remove_cv_t<std::remove_reference_t<Params>>*>(args[I])...);
}

}  // namespace cuda_emulation

cudaError_t cudaGetLastError();
const char* cudaGetErrorString(cudaError_t error);

// The runtime's typed launch: args[i] points at the i-th argument, already of the i-th
// parameter's type (as kernel_launch.cuh's launch passes them).
template <typename... Params>
cudaError_t cudaLaunchKernel(void (*kernel)(Params...), dim3 grid, dim3 block, void** args,
                             std::size_t dynamic_shared_bytes = 0, cudaStream_t = nullptr) {
  return cuda_emulation::run_grid(grid, block, dynamic_shared_bytes, [&] {
    cuda_emulation::call_with(kernel, args, std::index_sequence_for<Params...>{});
  });
}

inline void __syncthreads() { cuda_emulation::sync_threads(); }

inline float __shfl_xor_sync(unsigned mask, float value, int lane_mask, int width = 32) {
  std::uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  bits = cuda_emulation::shuffle_xor(mask, bits, lane_mask, width);
  std::memcpy(&value, &bits, sizeof bits);
  return value;
}

inline float __int_as_float(int bits) {
  float value;
  std::memcpy(&value, &bits, sizeof value);
  return value;
}

// Under its own name: C23 gives <math.h> an rsqrtf of its own, which a newer glibc declares.
inline float cuda_emulation_rsqrtf(float x) { return 1.0f / sqrtf(x); }
#define rsqrtf cuda_emulation_rsqrtf
