// The train layer's few CUDA calls behind a plain C++ interface, so that only
// cuda_support.cpp includes CUDA headers. cuda_support_none.cpp implements the same
// functions for builds without the CUDA translation unit (they report "not compiled").
#pragma once

#include <cstddef>
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

// --dump-memory-snapshot on CUDA: c10's caching allocator keeps its history of every device
// (allocations, frees, segments; no stack frames: none are recorded, as symbolising C++ stacks
// takes minutes) from start_memory_history(), the latest max_entries of it;
// memory_snapshot_pickled() is that history in PyTorch's own pickle (the run's memory tracker
// writes it, memory_tracking.hpp). Both throw std::runtime_error without CUDA compiled.
void start_memory_history(std::size_t max_entries);
std::string memory_snapshot_pickled();

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

// Points in time on one stream of one device, for the time between any two of them. The
// stream is the device's current stream when the object is made (the stream the caller's
// compute runs on), held and used for every record() whichever thread calls it: autograd runs
// a CUDA backward on a thread of its own, whose current stream need not be the caller's. An
// interval is read with seconds_between() after the device has been synchronised; forget()
// drops the recorded points and keeps their events for the next ones. Not thread-safe: one
// caller at a time. Without CUDA compiled the constructor throws std::runtime_error.
class DeviceTimestamps {
 public:
  explicit DeviceTimestamps(int device_index);
  ~DeviceTimestamps();
  DeviceTimestamps(const DeviceTimestamps&) = delete;
  DeviceTimestamps& operator=(const DeviceTimestamps&) = delete;
  // Records a point on the stream; returns its index (0, 1, ... since the last forget()).
  int64_t record();
  double seconds_between(int64_t from, int64_t to) const;
  void forget();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tokbench::train::cuda_support
