// The counting CPU allocator: wraps c10's CPU allocator and counts the bytes held by tensors,
// with an optional cap that raises c10::OutOfMemoryError as a real device would. It depends
// on c10 alone, so the same counter also measures a Python process (memory_probe.cpp): both
// sides of a comparison count tensor bytes the same way.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

namespace tokbench::train {

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
// --dump-memory-snapshot on the CPU: what the counter saw, in the terms of PyTorch's CUDA
// allocator history (model/../memory_snapshot.hpp writes it in that format).
struct CounterEvent {
  enum class Action { alloc, free };
  Action action = Action::alloc;
  std::uintptr_t address = 0;
  int64_t bytes = 0;
  int64_t time_us = 0;  // microseconds on the steady clock
};
struct CounterBlock {
  std::uintptr_t address = 0;
  int64_t bytes = 0;
};

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

  // From now on, keep every counted allocation and free, the latest max_events of them (older
  // ones are dropped, as CUDA's allocator history drops them). Costs a lock per event while on.
  void record_history(std::size_t max_events);
  std::vector<CounterEvent> history() const;
  std::vector<CounterBlock> live_blocks() const;  // the counted blocks held now
};

}  // namespace tokbench::train
