// A `tokbench comm` document (schema "tokbench-comm", version 1): collective times measured on
// one machine or job at one world size, by collective and message size. The prediction's
// `--cluster measured` reads collective times from it instead of a link model. Torch-free.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tokbench::predict {

struct CommPoint {
  double size_bytes = 0;
  double seconds = 0;  // the mean time of one call
  // The fastest and slowest measured call (min_time_us, max_time_us; the mean where the
  // document has none): the spread a prediction's interval carries.
  double min_seconds = 0, max_seconds = 0;
};

struct CommMeasurements {
  std::string source;  // the file
  std::string backend, device, dtype;
  int64_t world_size = 0, nnodes = 1, nproc_per_node = 0, threads_per_rank = 0;
  std::optional<int64_t> cpu_cores;  // environment.cpu_cores, when the document records it
  // compute_sharing (CPU documents): how much `ranks_per_node` ranks of `threads_per_rank`
  // threads computing at once slow each one down against one computing alone.
  struct ComputeSharing {
    int64_t ranks_per_node = 0, threads_per_rank = 0;
    double slowdown = 1;
    double slowdown_q1 = 1, slowdown_q3 = 1;  // the pairs' quartiles (the median where not recorded)
    // The reference GEMM alone on one rank (alone_ms; its n, from gemm_size or the "gemm" text):
    // the machine's speed at the document's moment, which a one-rank run's own reference probe
    // is compared with (reference_level.hpp). None where the document does not say.
    std::optional<double> alone_seconds;
    std::optional<int64_t> gemm_size;
    // beside_collective (documents from a tokbench that measures it): the GEMM on every rank
    // while each rank's all-reduce runs, against it without: the fraction of the compute rate a
    // running collective takes, and the collective's rate beside the compute against alone.
    struct BesideCollective {
      double steal = 0;
      double collective_rate = 1;
      int64_t covered_repeats = 0, repeats = 0;  // repeats whose all-reduce outlasted the GEMM
    };
    std::optional<BesideCollective> beside;
  };
  std::optional<ComputeSharing> compute_sharing;
  // gloo_cpu_busy.fraction (CPU documents from a tokbench that measures it): the cores one
  // rank's collective kept busy while it ran (its process's CPU time over the calls' wall time).
  std::optional<double> gloo_busy_fraction;
  std::map<std::string, std::vector<CommPoint>> by_collective;  // sizes ascending, one point per size
};

// The document in `text`; throws std::invalid_argument "comm document 'SOURCE': <what>" when it
// is not JSON, another schema or a newer version, lacks a field, or holds a result that is not a
// positive size and time or was marked incorrect.
CommMeasurements parse_comm_document(std::string_view text, const std::string& source);
CommMeasurements read_comm_document(const std::string& path);

// The time of one `collective` call on `bytes`: log-log interpolation between the two measured
// sizes around it; below the smallest, the smallest's time (latency-bound); beyond the largest,
// the largest's bus bandwidth held (time linear in size). Throws std::invalid_argument naming
// the collectives measured when `collective` was not.
double interpolated_seconds(const CommMeasurements& m, std::string_view collective, double bytes);

// The spread of `collective`'s calls at the measured size nearest `bytes` (in log size), as
// ratios to its mean: {min / mean, max / mean}. {1, 1} when the collective was not measured.
std::pair<double, double> relative_spread(const CommMeasurements& m, std::string_view collective, double bytes);

}  // namespace tokbench::predict
