// Binding each rank's threads and allocations to its device (device_binding.hpp).
#include "distributed/device_binding.hpp"

#include <ATen/ops/empty.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>

#include <atomic>
#include <mutex>

namespace tokbench::distributed {
namespace {

std::atomic<bool> g_recording{false};
std::mutex g_events_mutex;
std::vector<DeviceEvent> g_events;

void record(DeviceEvent::Kind kind, const c10::Device& device) {
  if (!g_recording.load(std::memory_order_relaxed)) return;
  std::lock_guard<std::mutex> lock(g_events_mutex);
  g_events.push_back(DeviceEvent{kind, std::this_thread::get_id(), device});
}

}  // namespace

void bind_rank_device(const c10::Device& device) {
  record(DeviceEvent::Kind::bind, device);
  if (device.is_cpu()) return;
  // The generic guard interface: CUDA's is registered by LibTorch's CUDA library, so this
  // translation unit needs no CUDA headers.
  c10::impl::getDeviceGuardImpl(device.type())->setDevice(device.has_index() ? device : c10::Device(device.type(), 0));
}

DeviceScope::DeviceScope(const c10::Device& device) : guard_(device.is_cpu() ? std::nullopt : std::optional(device)) {
  record(DeviceEvent::Kind::scope, device);
}

c10::DataPtr allocate_on(const c10::Device& device, std::size_t bytes) {
  record(DeviceEvent::Kind::allocate, device);
  // Through ATen's factory, which takes the device by name (it guards it itself), rather than
  // an allocator's allocate(), which on CUDA serves the thread's current device. The block is
  // then moved out of the temporary tensor's storage, with its allocator's deleter.
  const at::Tensor block =
      at::empty({static_cast<int64_t>(bytes)}, at::TensorOptions().dtype(at::kByte).device(device));
  return block.storage().unsafeGetStorageImpl()->set_data_ptr(c10::DataPtr(nullptr, device));
}

void record_device_events(bool on) {
  std::lock_guard<std::mutex> lock(g_events_mutex);
  g_events.clear();
  g_recording.store(on);
}

std::vector<DeviceEvent> take_device_events() {
  std::lock_guard<std::mutex> lock(g_events_mutex);
  return std::exchange(g_events, {});
}

}  // namespace tokbench::distributed
