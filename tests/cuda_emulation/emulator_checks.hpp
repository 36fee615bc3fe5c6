// The emulation's own checks (emulator_checks.cpp), for test_cuda_emulated.cpp, which does not
// see the emulated CUDA headers: the real block_sum (src/cuda/block_reduce.cuh) over whole
// blocks, and the misuses a launch must refuse with its reason.
#pragma once

#include <string>
#include <vector>

namespace cuda_emulation::checks {

// Block b's sum of its threads' indices 0..threads−1 through block_sum, for each of `blocks`.
std::vector<float> block_sums_of_thread_indices(unsigned threads, unsigned blocks);

enum class Misuse {
  none,                       // every thread at every barrier: launches
  barrier_in_half_the_block,  // __syncthreads() under `threadIdx.x < blockDim.x / 2`
  barrier_after_a_return,     // thread 0 returns, the others __syncthreads()
  shuffle_in_half_a_warp,     // __shfl_xor_sync(full mask) under `lane < 16`
  partial_mask,               // __shfl_xor_sync with mask 0xffff
};

// The launch's error text through kernel_launch.cuh's launch_result: "" when it launched.
std::string launch_error_of(Misuse misuse);

}  // namespace cuda_emulation::checks
