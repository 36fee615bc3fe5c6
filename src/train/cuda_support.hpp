// The train layer's few CUDA calls behind a plain C++ interface, so that only
// cuda_support.cpp includes CUDA headers. cuda_support_none.cpp implements the same
// functions for builds without the CUDA translation unit (they report "not compiled").
#pragma once

#include <cstdint>
#include <string>

namespace tokbench::train::cuda_support {

// Was the CUDA implementation compiled into this build?
bool compiled();

// Compute capability (major, minor) of a device; false with *why filled when unavailable.
bool compute_capability(int device_index, int* major, int* minor, std::string* why);

// Caching-allocator peaks since the last reset_peaks(), in bytes (aggregate over pools).
struct AllocatorPeaks {
  int64_t allocated_bytes = 0;
  int64_t reserved_bytes = 0;
};
void reset_peaks(int device_index);
AllocatorPeaks read_peaks(int device_index);

// Returns cached, unused blocks to the driver (after an OOM, so later runs start clean).
void empty_cache();

}  // namespace tokbench::train::cuda_support
