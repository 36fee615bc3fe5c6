// One device per rank, by construction. A rank binds its device once, on the thread that runs
// its step, before any device work (bind_rank_device); every other thread that works for the
// rank (gradient hooks, which CUDA's autograd runs on its own per-device threads) enters a
// DeviceScope first; storage the steps allocate outside ATen's factory functions (ZeRO-3's
// re-gathered buffers) comes from allocate_on, which names the device instead of taking the
// thread's current one. Why: CUDA's current device is per thread and defaults to 0, so any
// work that follows it instead of the plan would land on GPU 0 on every rank.
//
// On the CPU the calls bind nothing, but each is recorded when recording is on: the tests see
// every thread bind before it works, and every allocation name the rank's device.
#pragma once

#include <c10/core/Allocator.h>
#include <c10/core/Device.h>
#include <c10/core/DeviceGuard.h>

#include <cstddef>
#include <thread>
#include <vector>

namespace tokbench::distributed {

// Makes `device` the calling thread's current device (CUDA: cudaSetDevice) for good.
void bind_rank_device(const c10::Device& device);

// Makes `device` current for the scope's lifetime, then restores the thread's previous one.
class DeviceScope {
 public:
  explicit DeviceScope(const c10::Device& device);

 private:
  c10::OptionalDeviceGuard guard_;
};

// `bytes` from `device`'s allocator, on `device` itself whatever the thread's current device.
c10::DataPtr allocate_on(const c10::Device& device, std::size_t bytes);

// The record the tests read.
struct DeviceEvent {
  enum class Kind { bind, scope, allocate };
  Kind kind;
  std::thread::id thread;
  c10::Device device;
};
void record_device_events(bool on);
std::vector<DeviceEvent> take_device_events();

}  // namespace tokbench::distributed
