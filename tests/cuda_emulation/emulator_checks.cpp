// Kernels that hold the emulation to CUDA's rules (emulator_checks.hpp): one that must add up
// through the kernels' own block_sum, and misuses that a GPU would hang on or leave undefined.
#include "emulator_checks.hpp"

#include <cuda_runtime.h>

#include "cuda/block_reduce.cuh"
#include "cuda/kernel_launch.cuh"

namespace cuda_emulation::checks {
namespace {

__global__ void sum_thread_indices(float* sums) {
  __shared__ float shared[32];
  const float total = tokbench::cuda::block_sum(static_cast<float>(threadIdx.x), shared);
  if (threadIdx.x == 0) sums[blockIdx.x] = total;
}

__global__ void misuse_kernel(Misuse misuse, float* out) {
  const unsigned lane = threadIdx.x % 32;
  switch (misuse) {
    case Misuse::none: __syncthreads(); out[threadIdx.x] = __shfl_xor_sync(0xffffffffu, 1.0f * lane, 1); break;
    case Misuse::barrier_in_half_the_block:
      if (threadIdx.x < blockDim.x / 2) __syncthreads();
      break;
    case Misuse::barrier_after_a_return:
      if (threadIdx.x == 0) return;
      __syncthreads();
      break;
    case Misuse::shuffle_in_half_a_warp:
      if (lane < 16) out[threadIdx.x] = __shfl_xor_sync(0xffffffffu, 1.0f, 1);
      break;
    case Misuse::partial_mask: out[threadIdx.x] = __shfl_xor_sync(0xffffu, 1.0f, 1); break;
  }
}

}  // namespace

std::vector<float> block_sums_of_thread_indices(unsigned threads, unsigned blocks) {
  std::vector<float> sums(blocks, -1.0f);
  tokbench::cuda::launch(sum_thread_indices, dim3(blocks), dim3(threads), nullptr, sums.data());
  const std::string error = tokbench::cuda::launch_result("sum_thread_indices");
  if (!error.empty()) return {};
  return sums;
}

std::string launch_error_of(Misuse misuse) {
  std::vector<float> out(64, 0.0f);
  tokbench::cuda::launch(misuse_kernel, dim3(2), dim3(64), nullptr, misuse, out.data());
  return tokbench::cuda::launch_result("misuse_kernel");
}

}  // namespace cuda_emulation::checks
