// The counting CPU allocator (cpu_memory_counter.hpp).
//
// Why a table and not a header in front of each block: c10's CPU allocator is one
// process-wide slot, and code that calls GetAllocator(CPU)->raw_allocate / raw_deallocate
// (oneDNN through ideep, for bf16 matmuls and their scratch buffers) asks the slot at each
// call, so a buffer can be allocated by one allocator and freed by whichever is current
// later. With a header, a block the counter made and the default allocator freed went to
// free() 64 bytes past its start, and a block the default allocator made and the counter
// freed had a "header" of garbage read in front of it; both crash. Here a counted block is
// byte for byte the wrapped allocator's own block (same pointer, same context), so the
// wrapped allocator can free it whatever is current; the counter records the block's size
// and the wrapped allocator's context and deleter in a side table, and its deleter
//   - frees a block it counted through the deleter recorded for it, uncounting its bytes;
//   - hands a pointer it did not count (oneDNN's buffer from before the swap) to the raw
//     deleter of the allocator it wraps, uncounting nothing.
// DataPtrs stay "simple" (data == context, one raw deleter) as the default allocator's are,
// which raw_allocate requires and copy-on-write storages rely on.
#include "train/cpu_memory_counter.hpp"

#include <c10/core/Allocator.h>
#include <c10/core/CPUAllocator.h>
#include <c10/util/Exception.h>

#include <array>
#include <atomic>
#include <chrono>
#include <deque>
#include <cstdint>
#include <limits>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <unordered_map>

namespace tokbench::train {
namespace {

// What the counter knows of a block it counted: its size and how the allocator that made it
// frees it.
struct CountedBlock {
  std::size_t bytes = 0;
  void* inner_context = nullptr;
  c10::DeleterFnPtr inner_deleter = nullptr;
};

// Counted blocks by address, in shards so that threads freeing at once rarely meet on a lock.
class BlockTable {
 public:
  // Records `block` at `data`; returns the record it replaces, if any (a block the counter
  // counted whose free it never saw: another allocator freed it, and the address came back).
  std::optional<CountedBlock> insert(void* data, const CountedBlock& block) {
    Shard& shard = shard_for(data);
    std::lock_guard<std::mutex> lock(shard.mutex);
    auto [it, inserted] = shard.blocks.try_emplace(data, block);
    if (inserted) return std::nullopt;
    const CountedBlock stale = it->second;
    it->second = block;
    return stale;
  }
  // Every block counted now.
  std::vector<CounterBlock> blocks() {
    std::vector<CounterBlock> out;
    for (Shard& shard : shards_) {
      std::lock_guard<std::mutex> lock(shard.mutex);
      for (const auto& [data, block] : shard.blocks)
        out.push_back({reinterpret_cast<std::uintptr_t>(data), static_cast<int64_t>(block.bytes)});
    }
    return out;
  }
  // Removes and returns the record at `data`; nullopt when the counter did not count it.
  std::optional<CountedBlock> take(void* data) {
    Shard& shard = shard_for(data);
    std::lock_guard<std::mutex> lock(shard.mutex);
    const auto it = shard.blocks.find(data);
    if (it == shard.blocks.end()) return std::nullopt;
    const CountedBlock block = it->second;
    shard.blocks.erase(it);
    return block;
  }

 private:
  static constexpr int kShardBits = 6;
  struct alignas(64) Shard {
    std::mutex mutex;
    std::unordered_map<void*, CountedBlock> blocks;
  };
  Shard& shard_for(void* data) {
    // Fibonacci hashing: blocks are at least 64-byte aligned, so the low bits carry nothing.
    const auto key = static_cast<uint64_t>(reinterpret_cast<std::uintptr_t>(data));
    return shards_[(key * 0x9E3779B97F4A7C15ull) >> (64 - kShardBits)];
  }
  std::array<Shard, std::size_t{1} << kShardBits> shards_;
};

// The priority we register with; c10 keeps the highest-priority allocator, so ours wins over
// the default (priority 0) and the restore uses the same priority.
constexpr uint8_t kPriority = std::numeric_limits<uint8_t>::max();

class CountingCpuAllocator final : public c10::Allocator {
 public:
  static CountingCpuAllocator& instance() {
    // Never destroyed: storages keep a pointer to the allocator that made them, and blocks
    // may be freed through its deleter at any time, even during static destruction.
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
    c10::DataPtr inner = wrapped()->allocate(n);
    void* data = inner.get();
    TORCH_INTERNAL_ASSERT(data != nullptr, "the wrapped CPU allocator returned null for ", n, " bytes");
    const CountedBlock block{n, inner.get_context(), inner.get_deleter()};
    const c10::Device device = inner.device();
    inner.release_context();  // the block is now ours to free, through block.inner_deleter
    if (const auto stale = table_.insert(data, block)) {
      current_.fetch_sub(static_cast<int64_t>(stale->bytes), std::memory_order_relaxed);
    }
    add(static_cast<int64_t>(n));
    if (recording_.load(std::memory_order_relaxed)) record(CounterEvent::Action::alloc, data, n);
    return {data, data, &free_block, device};
  }

  // The deleter of every DataPtr the counter hands out, and what raw_deallocate calls on the
  // counter: safe for any pointer a CPU allocator handed out (see the file comment).
  c10::DeleterFnPtr raw_deleter() const override { return &free_block; }

  void copy_data(void* dest, const void* src, std::size_t count) const override {
    default_copy_data(dest, src, count);
  }

  // Installation state, changed only by CpuMemoryCounter under its single-instance rule.
  void install(std::optional<int64_t> cap, int64_t baseline) {
    c10::Allocator* current = c10::GetAllocator(c10::DeviceType::CPU);
    TORCH_INTERNAL_ASSERT(current != this, "the counting allocator is already installed");
    wrapped_.store(current);
    baseline_.store(baseline);
    cap_bytes_.store(cap.value_or(-1));
    reset_peak();
    c10::SetAllocator(c10::DeviceType::CPU, this, kPriority);
  }
  void uninstall() {
    recording_.store(false);  // no history of what is freed after the run
    // wrapped_ stays: storages the counter made still allocate through it (resize_) and
    // pointers freed through the counter after its removal still need its raw deleter.
    c10::SetAllocator(c10::DeviceType::CPU, wrapped_.load(), kPriority);
    cap_bytes_.store(-1);
    baseline_.store(0);
  }

  void record_history(std::size_t max_events) {
    std::lock_guard<std::mutex> lock(history_mutex_);
    max_events_ = max_events;
    history_.clear();
    recording_.store(max_events > 0);
  }
  std::vector<CounterEvent> history() {
    std::lock_guard<std::mutex> lock(history_mutex_);
    return {history_.begin(), history_.end()};
  }
  std::vector<CounterBlock> live_blocks() { return table_.blocks(); }

  int64_t current() const { return baseline_.load() + current_.load(); }
  int64_t peak() const { return baseline_.load() + peak_.load(); }
  void reset_peak() { peak_.store(current_.load()); }

 private:
  CountingCpuAllocator() = default;

  c10::Allocator* wrapped() const {
    c10::Allocator* allocator = wrapped_.load(std::memory_order_acquire);
    return allocator != nullptr ? allocator : c10::GetDefaultCPUAllocator();
  }

  void add(int64_t n) {
    const int64_t now = current_.fetch_add(n, std::memory_order_relaxed) + n;
    int64_t seen = peak_.load(std::memory_order_relaxed);
    while (now > seen && !peak_.compare_exchange_weak(seen, now, std::memory_order_relaxed)) {
    }
  }

  static void free_block(void* data) {
    if (data == nullptr) return;
    CountingCpuAllocator& self = instance();
    if (const auto block = self.table_.take(data)) {
      self.current_.fetch_sub(static_cast<int64_t>(block->bytes), std::memory_order_relaxed);
      if (self.recording_.load(std::memory_order_relaxed)) self.record(CounterEvent::Action::free, data, block->bytes);
      if (block->inner_deleter != nullptr) block->inner_deleter(block->inner_context);
      return;
    }
    // Not counted here: a raw_allocate'd block from the allocator current before the counter
    // (oneDNN frees through whatever allocator is current at free time). Its own allocator
    // frees it; the default CPU allocator when the wrapped one has no raw deleter.
    c10::DeleterFnPtr deleter = self.wrapped()->raw_deleter();
    if (deleter == nullptr || deleter == &free_block) deleter = c10::GetDefaultCPUAllocator()->raw_deleter();
    TORCH_INTERNAL_ASSERT(deleter != nullptr && deleter != &free_block);
    deleter(data);
  }

  void record(CounterEvent::Action action, void* data, std::size_t bytes) {
    const auto now = std::chrono::steady_clock::now().time_since_epoch();
    const CounterEvent event{action, reinterpret_cast<std::uintptr_t>(data), static_cast<int64_t>(bytes),
                             std::chrono::duration_cast<std::chrono::microseconds>(now).count()};
    std::lock_guard<std::mutex> lock(history_mutex_);
    if (history_.size() == max_events_) history_.pop_front();
    history_.push_back(event);
  }

  BlockTable table_;
  std::atomic<bool> recording_{false};
  std::mutex history_mutex_;
  std::deque<CounterEvent> history_;
  std::size_t max_events_ = 0;
  std::atomic<c10::Allocator*> wrapped_{nullptr};  // the allocator current at the last install
  std::atomic<int64_t> current_{0};                // bytes of live counted blocks
  std::atomic<int64_t> peak_{0};                   // max of current_ since the last reset
  std::atomic<int64_t> baseline_{0};               // bytes held before counting started
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
void CpuMemoryCounter::record_history(std::size_t max_events) {
  CountingCpuAllocator::instance().record_history(max_events);
}
std::vector<CounterEvent> CpuMemoryCounter::history() const { return CountingCpuAllocator::instance().history(); }
std::vector<CounterBlock> CpuMemoryCounter::live_blocks() const {
  return CountingCpuAllocator::instance().live_blocks();
}

}  // namespace tokbench::train
