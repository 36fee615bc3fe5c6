// The per-unit timing pass's clock (unit_clock.hpp).
#include "train/unit_clock.hpp"

#include "parallel/unit_clock_keys.hpp"
#include "train/cuda_support.hpp"

namespace tokbench::train {

UnitClock::UnitClock(const c10::Device& device) {
  if (device.is_cuda())
    device_ = std::make_unique<cuda_support::DeviceTimestamps>(device.has_index() ? device.index() : 0);
}

UnitClock::~UnitClock() = default;

const char* UnitClock::name() const {
  return device_ ? parallel::unit_clock_key::cuda_events : parallel::unit_clock_key::host;
}

bool UnitClock::readable_at_once() const { return !device_; }

int64_t UnitClock::mark() {
  const std::lock_guard<std::mutex> lock(mutex_);
  if (device_) return device_->record();
  host_points_.push_back(std::chrono::steady_clock::now());
  return static_cast<int64_t>(host_points_.size()) - 1;
}

double UnitClock::seconds_between(int64_t from, int64_t to) const {
  const std::lock_guard<std::mutex> lock(mutex_);
  if (device_) return device_->seconds_between(from, to);
  return std::chrono::duration<double>(host_points_.at(static_cast<std::size_t>(to)) -
                                       host_points_.at(static_cast<std::size_t>(from)))
      .count();
}

void UnitClock::forget() {
  const std::lock_guard<std::mutex> lock(mutex_);
  if (device_) device_->forget();
  host_points_.clear();
}

}  // namespace tokbench::train
