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
#include <filesystem>
#include <string>
#include <memory>
#include <optional>

#include "train/cpu_memory_counter.hpp"

namespace tokbench::train {

struct MemoryPeaks {
  int64_t allocated_bytes = 0;  // peak bytes held by tensors (caching allocator / CPU counter)
  int64_t reserved_bytes = 0;   // peak reserved by the allocator (CPU: the caching allocator's
                                // arena, caching_cpu_allocator.hpp; without it, same as allocated)
  int64_t peak_rss_bytes = 0;   // process peak resident set (CPU runs)
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
  // --dump-memory-snapshot: start keeping the allocation history (the CPU counter's, or CUDA's
  // caching allocator's), and write it with what is held now in PyTorch's snapshot format
  // (memory_snapshot.hpp). The writer returns whether the file was written and one line for the
  // report: where the snapshot went, or why none was written.
  struct SnapshotWrite {
    bool written = false;
    std::string message;
  };
  void start_history();
  SnapshotWrite write_snapshot(const std::filesystem::path& path) const;
  // Bytes held by tensors now (the CPU counter, baseline included, or CUDA's allocator).
  int64_t current_bytes() const;

 private:
  c10::Device device_;
  std::unique_ptr<CpuMemoryCounter> cpu_;
  bool cpu_caching_ = false;  // the counter wraps the caching CPU allocator
};

}  // namespace tokbench::train
