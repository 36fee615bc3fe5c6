// cuda_support.hpp for builds without the CUDA translation unit: every query answers that
// CUDA was not compiled in, so a CUDA device is rejected before any work starts.
#include "train/cuda_support.hpp"

namespace tokbench::train::cuda_support {

bool compiled() { return false; }

bool compute_capability(int, int*, int*, std::string* why) {
  if (why) *why = "this tokbench was built without CUDA support";
  return false;
}

void reset_peaks(int) {}
AllocatorPeaks read_peaks(int) { return {}; }
void empty_cache() {}

}  // namespace tokbench::train::cuda_support
