// Peak-memory accounting for a run. On the CPU a counting allocator wraps LibTorch's CPU
// allocator (c10::SetAllocator) and counts the bytes held by tensors, with an optional cap
// that raises c10::OutOfMemoryError as a real device would; on CUDA the caching allocator's
// own statistics are read. Only one CpuMemoryCounter may be installed at a time.
#pragma once

#include <c10/core/Device.h>

#include <cstdint>
#include <memory>
#include <optional>

namespace tokbench::train {

struct MemoryPeaks {
  int64_t allocated_bytes = 0;  // peak bytes held by tensors (caching allocator / CPU counter)
  int64_t reserved_bytes = 0;   // peak reserved by the allocator (CPU: same as allocated)
  int64_t peak_rss_bytes = 0;   // process peak resident set (CPU runs)
};

// Installs the counting wrapper as the CPU allocator for its lifetime and restores the
// previous one after. Tensors allocated while it is installed stay counted until freed, even
// after it is removed (the wrapper object itself is never destroyed, as storages keep a
// pointer to the allocator that made them).
class CpuMemoryCounter {
 public:
  // baseline_bytes: bytes already held when counting starts (e.g. the model's parameters,
  // allocated before) so peaks and the cap cover the whole working set.
  explicit CpuMemoryCounter(std::optional<int64_t> cap_bytes = std::nullopt, int64_t baseline_bytes = 0);
  ~CpuMemoryCounter();
  CpuMemoryCounter(const CpuMemoryCounter&) = delete;
  CpuMemoryCounter& operator=(const CpuMemoryCounter&) = delete;

  int64_t current_bytes() const;  // baseline + bytes held by counted tensors now
  int64_t peak_bytes() const;     // the maximum of current_bytes() since construction/reset
  void reset_peak();
};

// The process's peak resident set size in bytes (getrusage; since the process started).
int64_t peak_rss_bytes();

// Peaks of one run on its device: the CPU counter (installed here) or CUDA's statistics
// (reset here). Construct before the run's allocations and read peaks() at the end.
class RunMemoryTracker {
 public:
  RunMemoryTracker(const c10::Device& device, std::optional<int64_t> cpu_cap_bytes, int64_t baseline_bytes);
  ~RunMemoryTracker();
  MemoryPeaks peaks() const;

 private:
  c10::Device device_;
  std::unique_ptr<CpuMemoryCounter> cpu_;
};

}  // namespace tokbench::train
