// The train layer's few CUDA calls behind a plain C++ interface, so that only
// cuda_support.cpp includes CUDA headers. cuda_support_none.cpp implements the same
// functions for builds without the CUDA translation unit (they report "not compiled").
#pragma once

#include <cstdint>
#include <memory>
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
// Bytes the caching allocator hands to live tensors now (a host-side counter: no sync).
int64_t allocated_bytes_now(int device_index);

// Returns cached, unused blocks to the driver (after an OOM, so later runs start clean).
void empty_cache();

// Intervals timed on the device: begin() and end() record events on the device's current
// stream, so an interval is the time that stream spent between them (for a stream made to
// wait for communication, the communication it was exposed to). take_seconds() sums and
// forgets the recorded intervals; it must come after the device has been synchronised (the
// events have then completed, so reading them waits for nothing). Without CUDA compiled the
// constructor throws std::runtime_error.
class DeviceIntervals {
 public:
  explicit DeviceIntervals(int device_index);
  ~DeviceIntervals();
  DeviceIntervals(const DeviceIntervals&) = delete;
  DeviceIntervals& operator=(const DeviceIntervals&) = delete;
  void begin();
  void end();
  double take_seconds();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tokbench::train::cuda_support
