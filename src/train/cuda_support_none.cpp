// cuda_support.hpp for builds without the CUDA translation unit: every query answers that
// CUDA was not compiled in, so a CUDA device is rejected before any work starts.
#include "train/cuda_support.hpp"

#include <stdexcept>

namespace tokbench::train::cuda_support {

bool compiled() { return false; }

bool compute_capability(int, int*, int*, std::string* why) {
  if (why) *why = "this tokbench was built without CUDA support";
  return false;
}

void reset_peaks(int) {}
AllocatorPeaks read_peaks(int) { return {}; }
int64_t allocated_bytes_now(int) { return 0; }
void empty_cache() {}

struct DeviceIntervals::Impl {};
DeviceIntervals::DeviceIntervals(int) {
  throw std::runtime_error("device-timed intervals need CUDA, and this tokbench was built without CUDA support");
}
DeviceIntervals::~DeviceIntervals() = default;
void DeviceIntervals::begin() {}
void DeviceIntervals::end() {}
double DeviceIntervals::take_seconds() { return 0; }

struct DeviceTimestamps::Impl {};
DeviceTimestamps::DeviceTimestamps(int) {
  throw std::runtime_error("device timestamps need CUDA, and this tokbench was built without CUDA support");
}
DeviceTimestamps::~DeviceTimestamps() = default;
int64_t DeviceTimestamps::record() { return 0; }
double DeviceTimestamps::seconds_between(int64_t, int64_t) const { return 0; }
void DeviceTimestamps::forget() {}

void start_memory_history(std::size_t) {
  throw std::runtime_error("a CUDA memory snapshot needs CUDA, and this tokbench was built without CUDA support");
}
std::string memory_snapshot_pickled() {
  throw std::runtime_error("a CUDA memory snapshot needs CUDA, and this tokbench was built without CUDA support");
}

}  // namespace tokbench::train::cuda_support
