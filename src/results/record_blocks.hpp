// The run record's nested blocks that someone besides their writer reads (docs/run.md, "The JSON
// result"): each is a type with one writer (to JSON, in the order the record has always had) and
// one reader, and each key of a block is spelled once, here. `tokbench run` and `tokbench
// predict` fill the types; predict, compare, the result store and the record's checks read
// them. A reader never fails on a value of the wrong type: it reads it as absent (nullopt), and
// the caller says what it needs; where a reader must tell "absent" from "wrong" it says so.
// Torch-free.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "results/run_record.hpp"

namespace tokbench::results {

// The keys inside the blocks; the record's own keys are key::*.
namespace block_key {
// iterations[]
inline constexpr char index[] = "index";
inline constexpr char warmup[] = "warmup";
inline constexpr char time_ms[] = "time_ms";
inline constexpr char loss[] = "loss";
inline constexpr char real_tokens[] = "real_tokens";
}  // namespace block_key

// ---- iterations[]: one per iteration, warm-up included.
struct IterationEntry {
  std::optional<std::int64_t> index;
  bool warmup = false;
  std::optional<double> time_ms;
  std::optional<double> loss;               // null where the loss was not finite
  std::optional<std::int64_t> real_tokens;  // --dynamic only (absent from the entry otherwise)
};
Block to_json(const std::vector<IterationEntry>& iterations);
// The entries of `iterations` (an array; anything else reads as none), non-objects skipped.
std::vector<IterationEntry> iterations_from_json(const Block& iterations);
std::vector<IterationEntry> iterations_from_json(const nlohmann::json& iterations);
// The time_ms of each measured (not warm-up) entry that has one.
std::vector<double> measured_times_ms(const std::vector<IterationEntry>& iterations);

// ---- iter_time_ms: the statistics of the measured iterations' times (ms).
struct IterTimeStatsBlock {
  double mean = 0, median = 0, p10 = 0, p90 = 0, min = 0, max = 0, stddev = 0, cv = 0;
};
Block to_json(const IterTimeStatsBlock& stats);

// ---- the memory breakdown (GB): the record's six memory_*_GB keys (the reported rank's) and each
// rank's own, under the same keys; nullopt: unknown (written as null).
struct MemoryBreakdownGB {
  std::optional<double> parameters, gradients, optimizer_state, activations, comm_buffers, allocator_reserve;
};
// Sets `record`'s six memory breakdown members from `breakdown` (an unknown part: null). The one
// conversion `tokbench run` (the record and each rank) and `tokbench predict` write it through.
void put_memory_breakdown(RunRecord& record, const MemoryBreakdownGB& breakdown);

// ---- ranks[]: each rank's own figures in a multi-rank run.
struct RankEntry {
  std::optional<std::int64_t> rank;
  std::optional<std::string> status, message, host;
  std::optional<std::int64_t> measured_iters;
  std::optional<double> average_iter_time;         // ms
  std::optional<double> exposed_comm_ms_per_iter;  // ms
  std::optional<double> memory_allocated_peak_gb, memory_reserved_peak_gb, peak_rss_gb;
  std::optional<std::string> kernels;
  MemoryBreakdownGB memory;  // the rank's breakdown, under the record's own keys
  Block time_account;  // the rank's own account (docs/time-account.md), or null
};
Block to_json(const std::vector<RankEntry>& ranks);
// The entries of `ranks` (an array; anything else reads as none); an entry that is no object
// reads as an entry with nothing in it, so that indices stay those of the record.
std::vector<RankEntry> ranks_from_json(const Block& ranks);

// ---- unit_timings: the per-unit timings (docs/run.md, "Per-unit timings").
struct UnitEntry {
  bool object = true;  // false: the record's entry is no object (the reader keeps its place)
  std::optional<std::string> name, kind;
  std::optional<std::int64_t> parameters;
  std::optional<double> forward_seconds, backward_seconds, optimizer_seconds;  // finite numbers only
};
struct ParameterShapeEntry {
  bool object = true;
  std::optional<std::string> name, unit;
  std::optional<std::int64_t> elements;
};
struct UnitTimingsBlock {
  std::optional<std::int64_t> iterations;
  std::optional<std::string> clock;
  std::optional<std::int64_t> micro_batches_per_iteration;
  std::optional<double> iteration_seconds, exposed_comm_seconds, optimizer_seconds;  // finite numbers only
  std::optional<std::vector<UnitEntry>> units;                    // nullopt: not an array
  Block communication;                                             // comm_plan_json's, or null
  std::optional<std::vector<ParameterShapeEntry>> parameter_shapes;  // nullopt: not an array
};
Block to_json(const UnitTimingsBlock& timings);
// `timings` (an object) read. micro_batches_per_iteration is the one count a reader must not
// mistake for absent: a value there that is no whole number >= 0 is std::invalid_argument
// ("its 'micro_batches_per_iteration' is 2.5, not a whole number").
UnitTimingsBlock unit_timings_from_json(const Block& timings);

// ---- reference_probe: the fixed GEMM a one-rank run times before its warm-up and after its
// window (docs/run.md, "The reference probe"); or why none ran. `tokbench run` writes it,
// predict's reference level reads it.
struct ReferenceProbeBlock {
  bool ran = false;                // read: true only where the record says true
  std::optional<std::string> why;  // where none ran
  // Where it ran: what the product is, its size and threads, when it ran, each product's ms on
  // either side and between the window's iterations, and over the products the level is read
  // from (those inside the window where there are 3 or more, else both sides together) their
  // count, median, quartiles and IQR over the median; the total seconds of all of them.
  std::optional<std::string> what, when;
  std::optional<std::int64_t> gemm_size, threads, repeats;
  std::vector<double> before_ms, after_ms, within_ms;
  std::optional<double> median_ms, q1_ms, q3_ms, relative_iqr, seconds;
};
// {"ran": false, "why"} where it did not run; else every member, in the record's order.
Block to_json(const ReferenceProbeBlock& probe);
// `probe` read (null, absent or no object: ran false and no why, a record from before the probe).
ReferenceProbeBlock reference_probe_from_json(const Block& probe);

// ---- config: what resolution decided, beside the options as given (options_json). Absent
// members are not written (predict carries the measured run's cpu_allocator and warnings).
struct ResolvedConfig {
  Field<std::int64_t> fsdp_min_unit_params;  // the threshold FSDP's size units were cut by
  Field<bool> skip_data_sync;
  Field<std::string> dist_backend;
  Field<std::string> dist_launcher;
  Field<std::string> cpu_allocator;
  Field<std::vector<std::string>> warnings;
};
// Writes the present members into `config` (an object), in this order: a key it already holds
// keeps its place, a new one goes last.
void put_resolved(Block& config, const ResolvedConfig& resolved);
// The members `config` holds with their type (another type reads as absent).
ResolvedConfig resolved_from_json(const Block& config);

}  // namespace tokbench::results
