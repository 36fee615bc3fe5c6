// The emulated CUDA runtime's own rules (include/cuda_runtime.h, emulated_grid.cpp), before its
// tests of tokbench's kernels (test_cuda_emulated.cpp) can be trusted: the kernels' block_sum adds
// every thread of blocks of 32 to 1024 threads, and each barrier a GPU would hang on, or leave
// undefined, fails its launch with the reason as its error text.
#include <gtest/gtest.h>

#include <string>

#include "emulator_checks.hpp"

namespace {

TEST(CudaEmulation, BlockSumAddsEveryThreadOfEveryBlock) {
  for (const unsigned threads : {32u, 256u, 512u, 1024u}) {
    const auto sums = cuda_emulation::checks::block_sums_of_thread_indices(threads, 3);
    ASSERT_EQ(sums.size(), 3u) << threads << " threads: the launch failed";
    for (const float sum : sums) EXPECT_EQ(sum, threads * (threads - 1) / 2.0f) << threads << " threads";
  }
}

TEST(CudaEmulation, BarriersNotEveryThreadReachesFailTheLaunchSayingWhy) {
  using cuda_emulation::checks::Misuse;
  using cuda_emulation::checks::launch_error_of;
  EXPECT_EQ(launch_error_of(Misuse::none), "");
  EXPECT_NE(launch_error_of(Misuse::barrier_in_half_the_block).find("32 threads wait at __syncthreads() after 32"),
            std::string::npos);
  EXPECT_NE(launch_error_of(Misuse::barrier_after_a_return).find("after 1 of the block returned"), std::string::npos);
  EXPECT_NE(launch_error_of(Misuse::shuffle_in_half_a_warp).find("whose warp is not all there"), std::string::npos);
  EXPECT_NE(launch_error_of(Misuse::partial_mask).find("full-warp"), std::string::npos);
  EXPECT_EQ(launch_error_of(Misuse::none), "") << "a failed launch leaves the next one unaffected";
}

}  // namespace
