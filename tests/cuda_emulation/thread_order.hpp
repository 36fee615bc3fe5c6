// The order in which the emulated launch (emulated_grid.cpp) resumes a block's threads between
// barriers, and runs the grid's blocks. A kernel without races gives the same bits in every
// order; test_cuda_emulated.cpp runs each kernel in each and compares. Plain C++: the tests set
// it without seeing the emulated CUDA headers.
#pragma once

namespace cuda_emulation {

enum class ThreadOrder {
  ascending,   // thread 0 first, block 0 first: the order a warp's lanes are numbered in
  descending,  // the last thread and block first
  shuffled,    // a fixed pseudo-random permutation, a new one each scheduling round (barrier)
};

void set_thread_order(ThreadOrder order);

}  // namespace cuda_emulation
