// Timing the waits for communication (exposed_comm.hpp).
#include "distributed/exposed_comm.hpp"

#include <chrono>
#include <utility>

#include "account/range_names.hpp"
#include "train/cuda_support.hpp"
#include "train/profile_trace.hpp"

namespace tokbench::distributed {

ExposedCommTimer::ExposedCommTimer(const c10::Device& device) {
  if (device.is_cuda())
    device_ = std::make_unique<train::cuda_support::DeviceIntervals>(device.has_index() ? device.index() : 0);
}

ExposedCommTimer::~ExposedCommTimer() = default;
ExposedCommTimer::ExposedCommTimer(ExposedCommTimer&&) noexcept = default;
ExposedCommTimer& ExposedCommTimer::operator=(ExposedCommTimer&&) noexcept = default;

void ExposedCommTimer::wait(c10d::Work& work) {
  // The profiler sees the wait as this range, around the timer: the time account moves the
  // range's time, which holds the timed seconds, into exposed communication (time_account.hpp).
  train::TraceRange range(account::ranges::kCommWait);
  if (device_) {
    device_->begin();
    work.wait();  // the current (compute) stream now waits for the collective's stream
    device_->end();
    return;
  }
  const auto start = std::chrono::steady_clock::now();
  work.wait();
  host_seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

double ExposedCommTimer::take_seconds() {
  if (device_) return device_->take_seconds();
  return std::exchange(host_seconds_, 0.0);
}

}  // namespace tokbench::distributed
