// The per-run memory tracker and the process's peak RSS (memory_tracking.hpp).
#include "train/memory_tracking.hpp"

#include <c10/core/Allocator.h>
#include <sys/resource.h>

#include "files/atomic_file.hpp"
#include "train/caching_cpu_allocator.hpp"
#include "train/cuda_support.hpp"
#include "train/memory_snapshot.hpp"

#include <exception>

namespace tokbench::train {

int64_t peak_rss_bytes() {
  rusage usage{};
  if (getrusage(RUSAGE_SELF, &usage) != 0) return 0;
  return static_cast<int64_t>(usage.ru_maxrss) * 1024;  // Linux reports kilobytes
}

RunMemoryTracker::RunMemoryTracker(const c10::Device& device, std::optional<int64_t> cpu_cap_bytes,
                                   int64_t baseline_bytes)
    : device_(device) {
  if (device.is_cpu()) {
    cpu_caching_ = is_caching_cpu_allocator(c10::GetAllocator(c10::DeviceType::CPU));
    cpu_ = std::make_unique<CpuMemoryCounter>(cpu_cap_bytes, baseline_bytes);
  } else if (device.is_cuda()) {
    // The caching allocator already counts the model's parameters; resetting makes the peak
    // that of this run rather than of the process (the reference never resets it).
    cuda_support::reset_peaks(device.has_index() ? device.index() : 0);
  }
}

RunMemoryTracker::~RunMemoryTracker() = default;

int64_t RunMemoryTracker::current_bytes() const {
  if (cpu_) return cpu_->current_bytes();
  if (device_.is_cuda()) return cuda_support::allocated_bytes_now(device_.has_index() ? device_.index() : 0);
  return 0;
}

MemoryPeaks RunMemoryTracker::peaks() const {
  MemoryPeaks peaks;
  peaks.peak_rss_bytes = peak_rss_bytes();
  if (cpu_) {
    peaks.allocated_bytes = cpu_->peak_bytes();
    // The arena never gives pages back (decay -1), so what it holds now is its peak.
    peaks.reserved_bytes = cpu_caching_ ? caching_cpu_reserved_bytes() : peaks.allocated_bytes;
  } else if (device_.is_cuda()) {
    const auto cuda = cuda_support::read_peaks(device_.has_index() ? device_.index() : 0);
    peaks.allocated_bytes = cuda.allocated_bytes;
    peaks.reserved_bytes = cuda.reserved_bytes;
  }
  return peaks;
}

// Events kept: a few iterations of a large model allocate some ten thousand blocks.
constexpr std::size_t kSnapshotEvents = 1'000'000;

void RunMemoryTracker::start_history() {
  if (cpu_) {
    cpu_->record_history(kSnapshotEvents);
  } else if (device_.is_cuda()) {
    cuda_support::start_memory_history(kSnapshotEvents);
  }
}

RunMemoryTracker::SnapshotWrite RunMemoryTracker::write_snapshot(const std::filesystem::path& path) const {
  try {
    if (cpu_) {
      files::write_file_atomically(path, cpu_memory_snapshot_pickled(cpu_->history(), cpu_->live_blocks()));
    } else if (device_.is_cuda()) {
      files::write_file_atomically(path, cuda_support::memory_snapshot_pickled());
    } else {
      return {false, "no memory snapshot written: " + device_.str() + " keeps no allocation history"};
    }
  } catch (const std::exception& e) {
    return {false, std::string("no memory snapshot written: ") + e.what()};
  }
  return {true, "Dump memory snapshot at " + path.string()};
}

}  // namespace tokbench::train
