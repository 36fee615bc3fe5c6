// --dynamic: the reference benchmark's variable-length sequences (each sequence's length drawn
// as randint(10, T+1)), drawn here so that every executor and every rank agrees on them without
// talking: the length of a sequence is a pure function of the seed and the sequence's place in
// the run. Sequences are padded to T (input token 0, target -1, which every loss ignores), so
// shapes stay fixed; the metrics count the real tokens and the model FLOPs of the real lengths
// (run/metrics.hpp), the padded positions separately. The Python step draws the same lengths
// with the same arithmetic (python/tokbench_python_step.py, dynamic_length). Torch-free.
#pragma once

#include <cstdint>

namespace tokbench::train {

// The shortest sequence the reference draws; a --dynamic run needs T >= this.
inline constexpr int64_t kMinDynamicLength = 10;

// The place of sequence `b` of the `micro_batch_count`-th micro-batch a rank draws (0-based,
// warm-up included: iteration i's micro-batch m is i·GA + m) among every rank's sequences.
inline int64_t sequence_index(int64_t micro_batch_count, int64_t rank, int64_t world_size, int64_t micro_batch,
                              int64_t b) {
  return (micro_batch_count * world_size + rank) * micro_batch + b;
}

// The length of sequence `index` of a run with this seed and T = seq_len (>= kMinDynamicLength):
// uniform in [10, T] (splitmix64 of the seed and the index, reduced modulo T - 9; the bias of
// the modulo is below 2^-40 for any T a model has).
inline int64_t dynamic_length(uint64_t seed, int64_t index, int64_t seq_len) {
  uint64_t z = seed + 0x9E3779B97F4A7C15ull * (static_cast<uint64_t>(index) + 1);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  const auto span = static_cast<uint64_t>(seq_len - kMinDynamicLength + 1);
  return kMinDynamicLength + static_cast<int64_t>(z % span);
}

}  // namespace tokbench::train
