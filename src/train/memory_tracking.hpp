// Peak-memory accounting for a run. On the CPU a counting allocator wraps LibTorch's CPU
// allocator (c10::SetAllocator) and counts the bytes held by tensors, with an optional cap
// that raises c10::OutOfMemoryError as a real device would; on CUDA the caching allocator's
// own statistics are read. Only one CpuMemoryCounter may be installed at a time.
//
// What the CPU counter cannot see (docs/PERFORMANCE.md, Memory): memory that does not come
// from c10's CPU allocator (oneDNN's own scratchpads, BLAS packing buffers, thread stacks,
// malloc's fragmentation), which is why the process's peak RSS is reported beside it.
#pragma once

#include <c10/core/Device.h>

#include <cstdint>
#include <memory>
#include <optional>

namespace tokbench::train {

struct MemoryPeaks {
  int64_t allocated_bytes = 0;  // peak bytes held by tensors (caching allocator / CPU counter)
  int64_t reserved_bytes = 0;   // peak reserved by the allocator (CPU: the caching allocator's
                                // arena, caching_cpu_allocator.hpp; without it, same as allocated)
  int64_t peak_rss_bytes = 0;   // process peak resident set (CPU runs)
};

// Installs the counting wrapper as the CPU allocator for its lifetime and restores the
// previous one after. Tensors allocated while it is installed stay counted until freed, even
// after it is removed (the wrapper object itself is never destroyed, as storages keep a
// pointer to the allocator that made them).
//
// Safe under any install/remove order: c10's CPU allocator is one process-wide slot, and
// oneDNN (through ideep) allocates with raw_allocate on the allocator current at allocation
// and frees with raw_deallocate on the one current at free time. A counted block is the
// wrapped allocator's own block, so that allocator can free it; the counter's deleter frees
// what it counted through the allocator that made it and uncounts exactly those bytes, and
// hands any pointer it did not count to the wrapped allocator uncounted. The one free it
// cannot see is a counted block freed by another allocator (oneDNN freeing, after the
// counter's removal, a buffer allocated while it was installed): those bytes stay counted
// until the address next passes through the counter, and are then uncounted once.
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
  bool cpu_caching_ = false;  // the counter wraps the caching CPU allocator
};

}  // namespace tokbench::train
