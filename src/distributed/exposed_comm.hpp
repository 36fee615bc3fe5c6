// Exposed communication: the time the training computation spends waiting for a collective
// it cannot run without. On the CPU that is the host's time inside Work::wait(). On CUDA,
// wait() only makes the compute stream wait for the communication stream and returns at once,
// so the host's time says nothing: the wait is bracketed by timing events on the compute
// stream instead, read after the iteration's end synchronisation (no extra host sync).
#pragma once

#include <c10/core/Device.h>
#include <torch/csrc/distributed/c10d/Work.hpp>

#include <memory>

namespace tokbench::train::cuda_support {
class DeviceIntervals;
}

namespace tokbench::distributed {

class ExposedCommTimer {
 public:
  explicit ExposedCommTimer(const c10::Device& device);
  ~ExposedCommTimer();
  ExposedCommTimer(ExposedCommTimer&&) noexcept;
  ExposedCommTimer& operator=(ExposedCommTimer&&) noexcept;

  // work.wait(), timed.
  void wait(c10d::Work& work);

  // The exposed seconds since the last call; on CUDA only after the device was synchronised.
  double take_seconds();

 private:
  double host_seconds_ = 0;
  std::unique_ptr<train::cuda_support::DeviceIntervals> device_;  // CUDA only
};

}  // namespace tokbench::distributed
