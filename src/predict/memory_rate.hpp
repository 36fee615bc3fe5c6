// How fast this machine copies memory, alone and with every rank of a node copying at once: a
// short probe (memcpy of buffers larger than the caches, by one thread, then by `ranks` threads
// together, alternating). The parallel step's own copies (step_copies.hpp) and the optimizer,
// both memory-bound, are timed from it (docs/predict.md, "The step's own copies"). Torch-free.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>

namespace tokbench::predict {

struct MemoryRate {
  double alone_bytes_per_s = 0;     // one thread copying, the others idle (median of the repeats)
  double together_bytes_per_s = 0;  // each of `ranks` threads copying at once: the slowest's (median)
  int64_t ranks = 1;
  int64_t buffer_bytes = 0;  // each thread's buffer
  int64_t repeats = 0;
  // The median over alternating pairs of together / alone (0: not measured). A neighbour on a
  // shared host that slows the machine for a moment slows both halves of the pairs it touches,
  // so the pairs' ratio moves less than the ratio of the two medians (seen: 1.6 to 3.6 from one
  // minute to the next on the 2-core CI VM with 6 agents on it).
  double pair_slowdown = 0;
  std::string source;  // "probe" (measured here) or where the figures were given
  // How much slower a memory-bound pass is with every rank on the node running one, >= 1: the
  // pairs' median where measured, else alone / together.
  double sharing_slowdown() const;
};

// The probe: `repeats` alternating alone/together copies of `buffer_bytes` per thread.
inline constexpr int64_t kProbeBufferBytes = 64ll << 20;
inline constexpr int64_t kProbeRepeats = 9;
MemoryRate measure_memory_rate(int64_t ranks, int64_t buffer_bytes = kProbeBufferBytes, int64_t repeats = kProbeRepeats);

// The record's `prediction.memory_rate`: the figures, how they were measured.
nlohmann::ordered_json to_json(const MemoryRate& rate);

}  // namespace tokbench::predict
