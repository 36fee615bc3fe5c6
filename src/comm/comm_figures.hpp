// The arithmetic of a benchmark of collectives, as nccl-tests defines its figures
// (docs/comm.md): which collectives, what "size" means for each, the sizes a sweep visits, and
// the algorithm and bus bandwidths. Torch-free, so it is tested without LibTorch.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tokbench::comm {

enum class Collective { all_reduce, all_gather, reduce_scatter, broadcast };
inline constexpr std::array<Collective, 4> kCollectives = {Collective::all_reduce, Collective::all_gather,
                                                           Collective::reduce_scatter, Collective::broadcast};

const char* to_string(Collective collective);  // "all_reduce", ... (the option's words)
std::optional<Collective> collective_from_string(const std::string& name);

// Bus bandwidth / algorithm bandwidth for `world_size` ranks: all_reduce 2(n-1)/n, all_gather
// and reduce_scatter (n-1)/n, broadcast 1. What each rank's link must carry per byte of size,
// so that busbw can be held against a link's peak whatever the number of ranks.
double bus_bandwidth_factor(Collective collective, int64_t world_size);

// One point of the sweep as the collective runs it. size_bytes is nccl-tests' S: the buffer for
// all_reduce and broadcast; the whole gathered array (every rank's part) for all_gather; the
// whole array reduced (every rank's input) for reduce_scatter. count = size_bytes / element size.
struct SizePoint {
  int64_t size_bytes = 0;
  int64_t count = 0;
};

// A requested size rounded down to what the collective can move: whole elements, and for
// all_gather and reduce_scatter a whole number of elements per rank (nccl-tests rounds the same
// way). count 0 when the size holds less than that (the point is skipped).
SizePoint size_point(Collective collective, int64_t requested_bytes, int64_t element_bytes, int64_t world_size);

// Elements of each rank's input and output buffers for a point of `count` elements.
struct BufferCounts {
  int64_t input = 0;
  int64_t output = 0;
};
BufferCounts buffer_counts(Collective collective, int64_t count, int64_t world_size);

// min, min*f, min*f^2, ... up to max (inclusive); min <= max, f >= 2 (checked by the caller).
std::vector<int64_t> size_sweep(int64_t min_bytes, int64_t max_bytes, int64_t step_factor);

// "4096", "1K", "64M", "1G" (K, M, G: 1024, 1024^2, 1024^3, as nccl-tests reads them; a
// trailing "B" or "iB" is accepted); nullopt for anything else, zero, or past 2^62.
std::optional<int64_t> parse_byte_size(const std::string& text);
// The shortest such spelling of a size ("1K", "64M", "1536").
std::string byte_size_text(int64_t bytes);

// Algorithm bandwidth in GB/s (10^9 bytes per second): size / time.
double algorithm_bandwidth_GBps(int64_t size_bytes, double seconds);

// Mean, minimum and maximum of the measured iterations' times (each the slowest rank's).
struct IterationSummary {
  double mean_seconds = 0;
  double min_seconds = 0;
  double max_seconds = 0;
};
IterationSummary summarize(const std::vector<double>& seconds);  // empty: all zero

}  // namespace tokbench::comm
