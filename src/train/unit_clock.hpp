// The clock of the per-unit timing pass (train/unit_timing_pass.hpp): points in time marked as
// the pass runs, read as intervals afterwards. On the CPU it is the host's steady clock, which
// is exact there: CPU kernels have finished when they return, and autograd runs a CPU graph's
// backward (and its tensor hooks) on the thread that called backward, so a mark taken in a hook
// falls between the kernels before and after it. On CUDA the host runs ahead of the device, so
// each mark is a timing event recorded on the compute stream of the step's device, and an
// interval is the device time between two events, read once the device has been synchronised.
#pragma once

#include <c10/core/Device.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

namespace tokbench::train {

namespace cuda_support {
class DeviceTimestamps;
}

class UnitClock {
 public:
  // CUDA: events on `device`'s current stream of the calling thread (the step's bound device
  // and the stream its computation runs on), named explicitly for every mark.
  explicit UnitClock(const c10::Device& device);
  ~UnitClock();
  UnitClock(const UnitClock&) = delete;
  UnitClock& operator=(const UnitClock&) = delete;

  // "host" or "cuda_events": the record's `clock`.
  const char* name() const;
  // Whether an interval can be read as soon as its second mark is taken (host), or only after
  // the device has been synchronised (CUDA).
  bool readable_at_once() const;

  // Marks a point and returns its index (0, 1, ... since the last forget()). Safe from any
  // thread: on CUDA the backward's hooks run on autograd's own thread for the device.
  int64_t mark();
  double seconds_between(int64_t from, int64_t to) const;
  // Drops every point marked so far (their intervals must have been read).
  void forget();

 private:
  mutable std::mutex mutex_;
  std::vector<std::chrono::steady_clock::time_point> host_points_;
  std::unique_ptr<cuda_support::DeviceTimestamps> device_;  // CUDA only
};

}  // namespace tokbench::train
