// The jemalloc-backed caching CPU allocator (caching_cpu_allocator.hpp).
#include "train/caching_cpu_allocator.hpp"

#include <c10/core/Allocator.h>
#include <c10/core/CPUAllocator.h>
#include <c10/util/Exception.h>
#include <jemalloc/jemalloc.h>  // Debian's build exports the unprefixed API (mallocx, dallocx, mallctl)

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <limits>
#include <mutex>
#include <stdexcept>
#include <string>

namespace tokbench::train {
namespace {

// The priority the counting allocator registers with (memory_tracking.cpp): c10 keeps the
// highest-priority allocator, so the same priority lets either replace the other.
constexpr uint8_t kPriority = std::numeric_limits<uint8_t>::max();

std::atomic<const c10::Allocator*> g_instance{nullptr};  // set once the allocator exists

void set_decay_never(unsigned arena) {
  for (const char* what : {"dirty_decay_ms", "muzzy_decay_ms"}) {
    const std::string name = "arena." + std::to_string(arena) + "." + what;
    ssize_t never = -1;
    if (mallctl(name.c_str(), nullptr, nullptr, &never, sizeof never) != 0)
      throw std::runtime_error("jemalloc: cannot set " + name + " to -1");
  }
}

// Whether the process's malloc is jemalloc's: arenas.lookup finds the arena of a malloc'd
// pointer only when jemalloc made it.
bool malloc_is_jemalloc() {
  void* probe = std::malloc(64);
  unsigned arena = 0;
  size_t size = sizeof arena;
  const bool ours = mallctl("arenas.lookup", &arena, &size, &probe, sizeof probe) == 0;
  std::free(probe);
  return ours;
}

class CachingCpuAllocator final : public c10::Allocator {
 public:
  static CachingCpuAllocator& instance() {
    static auto* allocator = new CachingCpuAllocator();  // never destroyed
    g_instance.store(allocator);
    return *allocator;
  }

  c10::DataPtr allocate(std::size_t n) override {
    if (n == 0) return {nullptr, nullptr, &free_block, c10::Device(c10::DeviceType::CPU)};
    void* data = n < large_min_ ? mallocx(n, MALLOCX_ALIGN(64)) : mallocx(n, flags_);
    TORCH_CHECK_WITH(OutOfMemoryError, data != nullptr, "caching CPU allocator: out of memory allocating ", n,
                     " bytes");
    if (n < large_min_) small_live_.fetch_add(static_cast<int64_t>(sallocx(data, 0)), std::memory_order_relaxed);
    report_to_profiler(data, static_cast<int64_t>(sallocx(data, 0)));
    return {data, data, &free_block, c10::Device(c10::DeviceType::CPU)};
  }

  c10::DeleterFnPtr raw_deleter() const override { return &free_block; }

  void copy_data(void* dest, const void* src, std::size_t count) const override {
    default_copy_data(dest, src, count);
  }

  int64_t reserved_bytes() const {
    if (!created_) return 0;
    uint64_t epoch = 1;  // statistics are snapshots, refreshed by writing the epoch
    size_t size = sizeof epoch;
    mallctl("epoch", &epoch, &size, &epoch, sizeof epoch);
    size_t pages = 0;
    for (const char* what : {"pactive", "pdirty", "pmuzzy"}) {
      const std::string name = "stats.arenas." + std::to_string(arena_) + "." + what;
      size_t value = 0;
      size = sizeof value;
      if (mallctl(name.c_str(), &value, &size, nullptr, 0) == 0) pages += value;
    }
    return static_cast<int64_t>(pages * page_size_) + small_live_.load(std::memory_order_relaxed);
  }

 private:
  CachingCpuAllocator() {
    if (!malloc_is_jemalloc())
      throw std::runtime_error(
          "--cpu-allocator caching needs jemalloc as the process's malloc (another allocator is preloaded?); "
          "valid here: system");
    size_t size = sizeof arena_;
    if (mallctl("arenas.create", &arena_, &size, nullptr, 0) != 0)
      throw std::runtime_error("jemalloc: arenas.create failed");
    set_decay_never(arena_);
    size = sizeof page_size_;
    if (mallctl("arenas.page", &page_size_, &size, nullptr, 0) != 0) page_size_ = 4096;
    size = sizeof large_min_;
    if (mallctl("arenas.lextent.0.size", &large_min_, &size, nullptr, 0) != 0) large_min_ = 16384;
    // No thread cache: blocks go straight back to the arena, so the arena's statistics are
    // the cache's whole content and a block freed on one thread serves the next on another.
    flags_ = MALLOCX_ARENA(arena_) | MALLOCX_TCACHE_NONE | MALLOCX_ALIGN(64);
    created_ = true;
  }

  // Frees any jemalloc pointer (the arena is found from the pointer): blocks of this
  // allocator and, after a swap, blocks of c10's default allocator (posix_memalign).
  static void free_block(void* data) {
    if (data == nullptr) return;
    CachingCpuAllocator& self = instance();
    const size_t usable = sallocx(data, 0);
    // A small block: counted out only if it is ours (a default-allocator block of the same
    // size class freed here after a swap is not; the count then errs low, never negative).
    if (usable < self.large_min_) {
      int64_t live = self.small_live_.load(std::memory_order_relaxed);
      const auto bytes = static_cast<int64_t>(usable);
      while (live >= bytes && !self.small_live_.compare_exchange_weak(live, live - bytes, std::memory_order_relaxed)) {
      }
    }
    self.report_to_profiler(data, -static_cast<int64_t>(usable));
    dallocx(data, MALLOCX_TCACHE_NONE);
  }

  // Under a profiler that records memory (run --profile), every allocation and free becomes
  // a [memory] event under the operator that made it, as c10's default CPU allocator and
  // CUDA's caching allocator report theirs; without one, a relaxed atomic add and a check.
  void report_to_profiler(void* data, int64_t usable_delta) {
    const int64_t live = live_.fetch_add(usable_delta, std::memory_order_relaxed) + usable_delta;
    if (!c10::memoryProfilingEnabled()) return;
    c10::reportMemoryUsageToProfiler(data, usable_delta, static_cast<size_t>(std::max<int64_t>(live, 0)),
                                     static_cast<size_t>(reserved_bytes()), c10::Device(c10::DeviceType::CPU));
  }

  unsigned arena_ = 0;
  size_t page_size_ = 4096;
  // Blocks below jemalloc's smallest large size class (16 KiB) come from its ordinary small
  // slabs (cached there anyway): in the never-decaying arena, a small slab taking a page
  // between large extents shifted them by a page per iteration and its dirty pages grew
  // without bound (measured: +1 page per iteration for a 4 KiB + 256 KiB pattern).
  size_t large_min_ = 16384;
  std::atomic<int64_t> small_live_{0};  // usable bytes of live small blocks, part of "reserved"
  std::atomic<int64_t> live_{0};        // usable bytes of every live block (the profiler's "allocated")
  int flags_ = 0;
  bool created_ = false;
};

}  // namespace

c10::Allocator* caching_cpu_allocator() { return &CachingCpuAllocator::instance(); }

bool is_caching_cpu_allocator(const c10::Allocator* allocator) {
  return allocator != nullptr && allocator == g_instance.load();
}

int64_t caching_cpu_reserved_bytes() {
  return g_instance.load() != nullptr ? CachingCpuAllocator::instance().reserved_bytes() : 0;
}

ScopedCachingCpuAllocator::ScopedCachingCpuAllocator() {
  c10::Allocator* caching = caching_cpu_allocator();  // throws before anything changes
  previous_ = c10::GetAllocator(c10::DeviceType::CPU);
  c10::SetAllocator(c10::DeviceType::CPU, caching, kPriority);
}

ScopedCachingCpuAllocator::~ScopedCachingCpuAllocator() {
  c10::SetAllocator(c10::DeviceType::CPU, previous_, kPriority);
}

}  // namespace tokbench::train
