// How fast this machine copies memory, alone and with every rank of a node copying at once: a
// short probe (memcpy of buffers larger than the caches, by one thread, then by `ranks` threads
// together, alternating). The parallel step's own copies (step_copies.hpp) and the optimizer,
// both memory-bound, are timed from it (docs/predict.md, "The step's own copies"). Torch-free.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

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
  // The probe's blocks (rate_from_blocks) and each one's median pair ratio; 0 and empty: given.
  int64_t blocks = 0;
  std::vector<double> block_pair_slowdowns;
  std::string source;  // "probe" (measured here) or where the figures were given
  // How much slower a memory-bound pass is with every rank on the node running one, >= 1: the
  // pairs' median where measured, else alone / together.
  double sharing_slowdown() const;
};

// One block of the probe: `repeats` alternating alone/together copies, each side's seconds.
struct ProbeBlock {
  std::vector<double> alone_seconds, together_seconds;
};

// The probe: `blocks` blocks of `repeats` alternating alone/together copies of `buffer_bytes` per
// thread, kProbeBlockGap apart. The block with the lowest median pair ratio gives the figures:
// a neighbour can only slow a copy, and one that held a core for a whole block (seen here: the
// pairs' median 1.77 where the blocks before and after read 1.06, the kernel freeing the memory
// of the run that had just exited) would otherwise set the step's copies and the optimizer 70%
// too slow.
inline constexpr int64_t kProbeBufferBytes = 64ll << 20;
inline constexpr int64_t kProbeRepeats = 9;
inline constexpr int64_t kProbeBlocks = 3;
inline constexpr double kProbeBlockGapSeconds = 0.25;
MemoryRate measure_memory_rate(int64_t ranks, int64_t buffer_bytes = kProbeBufferBytes, int64_t repeats = kProbeRepeats,
                               int64_t blocks = kProbeBlocks);

// The figures of the block whose median pair ratio (together / alone) is lowest; `blocks` and
// `block_pair_slowdowns` say what the others read. Needs at least one block of one pair.
MemoryRate rate_from_blocks(const std::vector<ProbeBlock>& blocks, int64_t ranks, int64_t buffer_bytes);

// The record's `prediction.memory_rate`: the figures, how they were measured.
nlohmann::ordered_json to_json(const MemoryRate& rate);

}  // namespace tokbench::predict
