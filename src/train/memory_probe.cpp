// The counting CPU allocator behind a C interface, for a process that is not tokbench: the
// Python executors (python/tokbench_python_step.py) load this module with ctypes and install
// the counter before they build their model, so their tensor peak is counted by the same code,
// in the same way, as tokbench's own steps' (docs/distributed.md, "Memory").
//
// The counter installed here is never removed: the Python process ends after its result, and
// tensors it counted may be freed until then.
#include <cstdint>
#include <exception>
#include <memory>

#include "train/cpu_memory_counter.hpp"

namespace {
std::unique_ptr<tokbench::train::CpuMemoryCounter> g_counter;
}  // namespace

extern "C" {

// 0 once installed; -1 when a counter is already installed in this process.
__attribute__((visibility("default"))) int tokbench_memory_probe_install() {
  if (g_counter) return -1;
  try {
    g_counter = std::make_unique<tokbench::train::CpuMemoryCounter>();
  } catch (const std::exception&) {
    return -1;
  }
  return 0;
}

// Bytes held by tensors now, and the most held since the install or the last reset (-1 before
// an install).
__attribute__((visibility("default"))) int64_t tokbench_memory_probe_current() {
  return g_counter ? g_counter->current_bytes() : -1;
}
__attribute__((visibility("default"))) int64_t tokbench_memory_probe_peak() {
  return g_counter ? g_counter->peak_bytes() : -1;
}
__attribute__((visibility("default"))) void tokbench_memory_probe_reset_peak() {
  if (g_counter) g_counter->reset_peak();
}

}  // extern "C"
