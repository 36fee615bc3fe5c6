// CUDA implementation of cuda_support.hpp: compute capability from at::cuda's device
// properties and peak memory from the CUDA caching allocator's DeviceStats (the numbers
// torch.cuda.max_memory_allocated / max_memory_reserved report). Compiled only with
// TOKBENCH_CUDA_ENABLED; it builds without a GPU and answers "unavailable" at run time.
#include "train/cuda_support.hpp"

#include <ATen/cuda/CUDAContext.h>
#include <ATen/cuda/CUDAEvent.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAFunctions.h>
#include <torch/csrc/cuda/memory_snapshot.h>

#include <utility>
#include <vector>

namespace tokbench::train::cuda_support {

bool compiled() { return true; }

bool compute_capability(int device_index, int* major, int* minor, std::string* why) {
  const int count = static_cast<int>(c10::cuda::device_count());
  if (device_index < 0 || device_index >= count) {
    if (why) {
      *why = "CUDA device " + std::to_string(device_index) + " is not available (" +
             std::to_string(count) + " visible)";
    }
    return false;
  }
  const cudaDeviceProp* props = at::cuda::getDeviceProperties(static_cast<c10::DeviceIndex>(device_index));
  *major = props->major;
  *minor = props->minor;
  return true;
}

void reset_peaks(int device_index) {
  c10::cuda::CUDACachingAllocator::resetPeakStats(static_cast<c10::DeviceIndex>(device_index));
}

AllocatorPeaks read_peaks(int device_index) {
  using c10::CachingAllocator::StatType;
  const auto stats =
      c10::cuda::CUDACachingAllocator::getDeviceStats(static_cast<c10::DeviceIndex>(device_index));
  const auto aggregate = static_cast<size_t>(StatType::AGGREGATE);
  return {stats.allocated_bytes[aggregate].peak, stats.reserved_bytes[aggregate].peak};
}

int64_t allocated_bytes_now(int device_index) {
  using c10::CachingAllocator::StatType;
  const auto stats =
      c10::cuda::CUDACachingAllocator::getDeviceStats(static_cast<c10::DeviceIndex>(device_index));
  return stats.allocated_bytes[static_cast<size_t>(StatType::AGGREGATE)].current;
}

void empty_cache() { c10::cuda::CUDACachingAllocator::emptyCache(); }

struct DeviceIntervals::Impl {
  c10::DeviceIndex device = 0;
  // Timing events (at::cuda::CUDAEvent's default flags disable timing), kept and reused from one
  // take_seconds() to the next: after the first round (an event is made at its first record),
  // no event is made or destroyed inside a timed iteration.
  std::vector<std::pair<at::cuda::CUDAEvent, at::cuda::CUDAEvent>> intervals;
  std::size_t closed = 0;  // intervals[0, closed) hold this round's begin() and end() pairs
  bool open = false;       // a begin() waits for its end()
};

DeviceIntervals::DeviceIntervals(int device_index) : impl_(std::make_unique<Impl>()) {
  impl_->device = static_cast<c10::DeviceIndex>(device_index);
}

DeviceIntervals::~DeviceIntervals() = default;

void DeviceIntervals::begin() {
  // A begin() whose end() never came (the wait between them threw) is overwritten here.
  if (impl_->closed == impl_->intervals.size())
    impl_->intervals.emplace_back(at::cuda::CUDAEvent(cudaEventDefault), at::cuda::CUDAEvent(cudaEventDefault));
  impl_->intervals[impl_->closed].first.record(at::cuda::getCurrentCUDAStream(impl_->device));
  impl_->open = true;
}

void DeviceIntervals::end() {
  if (!impl_->open) return;  // no begin() to pair with: nothing timed
  impl_->intervals[impl_->closed].second.record(at::cuda::getCurrentCUDAStream(impl_->device));
  impl_->open = false;
  ++impl_->closed;
}

double DeviceIntervals::take_seconds() {
  double seconds = 0;
  for (std::size_t i = 0; i < impl_->closed; ++i)
    seconds += impl_->intervals[i].first.elapsed_time(impl_->intervals[i].second) / 1e3;  // ms
  impl_->closed = 0;
  impl_->open = false;  // a begin() left open belongs to the round just taken
  return seconds;
}

struct DeviceTimestamps::Impl {
  at::cuda::CUDAStream stream;
  std::vector<at::cuda::CUDAEvent> events;  // timing events, reused after forget()
  std::size_t recorded = 0;                 // events[0, recorded) hold this round's points
};

DeviceTimestamps::DeviceTimestamps(int device_index)
    : impl_(std::make_unique<Impl>(Impl{at::cuda::getCurrentCUDAStream(static_cast<c10::DeviceIndex>(device_index)),
                                        {}, 0})) {}

DeviceTimestamps::~DeviceTimestamps() = default;

int64_t DeviceTimestamps::record() {
  if (impl_->recorded == impl_->events.size()) impl_->events.emplace_back(cudaEventDefault);
  impl_->events[impl_->recorded].record(impl_->stream);
  return static_cast<int64_t>(impl_->recorded++);
}

double DeviceTimestamps::seconds_between(int64_t from, int64_t to) const {
  return impl_->events.at(static_cast<std::size_t>(from)).elapsed_time(impl_->events.at(static_cast<std::size_t>(to))) /
         1e3;  // ms
}

void DeviceTimestamps::forget() { impl_->recorded = 0; }

void start_memory_history(std::size_t max_entries) {
  // enabled "all": allocator state and trace; context "all": segments and blocks keep where
  // they came from; stacks "python": no interpreter here, so no frames (C++ ones would cost
  // minutes of symbolising at the dump).
  torch::cuda::_record_memory_history("all", "all", "python", max_entries);
}

std::string memory_snapshot_pickled() { return torch::cuda::_memory_snapshot_pickled(); }

}  // namespace tokbench::train::cuda_support
