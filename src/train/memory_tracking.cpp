// The counting CPU allocator and the per-run memory tracker (memory_tracking.hpp).
// Each counted block carries a small header in front of the data holding its size and the
// wrapped allocator's context and deleter, so a DataPtr stays "simple" (data == context, a
// raw deleter) exactly like the default CPU allocator's, and freeing needs no lookup table.
#include "train/memory_tracking.hpp"

#include <c10/core/Allocator.h>
#include <c10/core/CPUAllocator.h>
#include <c10/core/alignment.h>
#include <c10/util/Exception.h>
#include <sys/resource.h>

#include <atomic>
#include <cstring>
#include <limits>
#include <new>
#include <stdexcept>
#include <string>

#include "train/cuda_support.hpp"

namespace tokbench::train {
namespace {

// Sits in front of every counted block; its size keeps the data at the wrapped allocator's
// alignment (gAlignment, 64 bytes on x86).
struct alignas(c10::gAlignment) BlockHeader {
  std::size_t bytes;
  void* inner_context;
  c10::DeleterFnPtr inner_deleter;
};
static_assert(sizeof(BlockHeader) % c10::gAlignment == 0, "the header must preserve data alignment");

// The priority we register with; c10 keeps the highest-priority allocator, so ours wins over
// the default (priority 0) and the restore uses the same priority.
constexpr uint8_t kPriority = std::numeric_limits<uint8_t>::max();

class CountingCpuAllocator final : public c10::Allocator {
 public:
  static CountingCpuAllocator& instance() {
    // Never destroyed: storages keep a pointer to the allocator that made them.
    static auto* allocator = new CountingCpuAllocator();
    return *allocator;
  }

  c10::DataPtr allocate(std::size_t n) override {
    // Empty storages get a null pointer, as from the default CPU allocator.
    if (n == 0) return {nullptr, nullptr, &free_block, c10::Device(c10::DeviceType::CPU)};
    const int64_t cap = cap_bytes_.load(std::memory_order_relaxed);
    const int64_t held = baseline_.load(std::memory_order_relaxed) + current_.load(std::memory_order_relaxed);
    TORCH_CHECK_WITH(OutOfMemoryError, cap < 0 || held + static_cast<int64_t>(n) <= cap,
                     "CPU memory cap exceeded: tried to allocate ", n, " bytes with ", held,
                     " bytes held and a cap of ", cap, " bytes (tokbench cpu_memory_cap_bytes)");
    c10::DataPtr inner = base_->allocate(n + sizeof(BlockHeader));
    auto* raw = static_cast<char*>(inner.get());
    TORCH_INTERNAL_ASSERT(raw != nullptr && inner.get_deleter() != nullptr);
    new (raw) BlockHeader{n, inner.get_context(), inner.get_deleter()};
    const c10::Device device = inner.device();
    inner.release_context();
    add(static_cast<int64_t>(n));
    void* data = raw + sizeof(BlockHeader);
    return {data, data, &free_block, device};
  }

  c10::DeleterFnPtr raw_deleter() const override { return &free_block; }

  void copy_data(void* dest, const void* src, std::size_t count) const override {
    default_copy_data(dest, src, count);
  }

  // Installation state, changed only by CpuMemoryCounter under its single-instance rule.
  void install(std::optional<int64_t> cap, int64_t baseline) {
    base_ = c10::GetAllocator(c10::DeviceType::CPU);
    TORCH_INTERNAL_ASSERT(base_ != this, "the counting allocator is already installed");
    baseline_.store(baseline);
    cap_bytes_.store(cap.value_or(-1));
    reset_peak();
    c10::SetAllocator(c10::DeviceType::CPU, this, kPriority);
  }
  void uninstall() {
    c10::SetAllocator(c10::DeviceType::CPU, base_, kPriority);
    cap_bytes_.store(-1);
    baseline_.store(0);
  }

  int64_t current() const { return baseline_.load() + current_.load(); }
  int64_t peak() const { return baseline_.load() + peak_.load(); }
  void reset_peak() { peak_.store(current_.load()); }

 private:
  CountingCpuAllocator() = default;

  void add(int64_t n) {
    const int64_t now = current_.fetch_add(n, std::memory_order_relaxed) + n;
    int64_t seen = peak_.load(std::memory_order_relaxed);
    while (now > seen && !peak_.compare_exchange_weak(seen, now, std::memory_order_relaxed)) {
    }
  }

  static void free_block(void* data) {
    if (data == nullptr) return;
    auto* header = reinterpret_cast<BlockHeader*>(static_cast<char*>(data) - sizeof(BlockHeader));
    instance().current_.fetch_sub(static_cast<int64_t>(header->bytes), std::memory_order_relaxed);
    const BlockHeader copy = *header;
    copy.inner_deleter(copy.inner_context);
  }

  c10::Allocator* base_ = nullptr;
  std::atomic<int64_t> current_{0};   // bytes of live counted blocks
  std::atomic<int64_t> peak_{0};      // max of current_ since the last reset
  std::atomic<int64_t> baseline_{0};  // bytes held before counting started
  std::atomic<int64_t> cap_bytes_{-1};
};

std::atomic<bool> g_counter_installed{false};

}  // namespace

CpuMemoryCounter::CpuMemoryCounter(std::optional<int64_t> cap_bytes, int64_t baseline_bytes) {
  if (g_counter_installed.exchange(true)) {
    throw std::logic_error("CpuMemoryCounter: a counter is already installed");
  }
  CountingCpuAllocator::instance().install(cap_bytes, baseline_bytes);
}

CpuMemoryCounter::~CpuMemoryCounter() {
  CountingCpuAllocator::instance().uninstall();
  g_counter_installed.store(false);
}

int64_t CpuMemoryCounter::current_bytes() const { return CountingCpuAllocator::instance().current(); }
int64_t CpuMemoryCounter::peak_bytes() const { return CountingCpuAllocator::instance().peak(); }
void CpuMemoryCounter::reset_peak() { CountingCpuAllocator::instance().reset_peak(); }

int64_t peak_rss_bytes() {
  rusage usage{};
  if (getrusage(RUSAGE_SELF, &usage) != 0) return 0;
  return static_cast<int64_t>(usage.ru_maxrss) * 1024;  // Linux reports kilobytes
}

RunMemoryTracker::RunMemoryTracker(const c10::Device& device, std::optional<int64_t> cpu_cap_bytes,
                                   int64_t baseline_bytes)
    : device_(device) {
  if (device.is_cpu()) {
    cpu_ = std::make_unique<CpuMemoryCounter>(cpu_cap_bytes, baseline_bytes);
  } else if (device.is_cuda()) {
    // The caching allocator already counts the model's parameters; resetting makes the peak
    // that of this run rather than of the process (the reference never resets it).
    cuda_support::reset_peaks(device.has_index() ? device.index() : 0);
  }
}

RunMemoryTracker::~RunMemoryTracker() = default;

MemoryPeaks RunMemoryTracker::peaks() const {
  MemoryPeaks peaks;
  peaks.peak_rss_bytes = peak_rss_bytes();
  if (cpu_) {
    peaks.allocated_bytes = cpu_->peak_bytes();
    peaks.reserved_bytes = peaks.allocated_bytes;
  } else if (device_.is_cuda()) {
    const auto cuda = cuda_support::read_peaks(device_.has_index() ? device_.index() : 0);
    peaks.allocated_bytes = cuda.allocated_bytes;
    peaks.reserved_bytes = cuda.reserved_bytes;
  }
  return peaks;
}

}  // namespace tokbench::train
