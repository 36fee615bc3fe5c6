// What a benchmark of collectives found, as figures, as the JSON document other tools read
// (schema "tokbench-comm", docs/comm.md), and as the flat table every report format writes.
// Torch-free.
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <vector>

#include "comm/comm_figures.hpp"
#include "comm/comm_plan.hpp"
#include "results/comm_document_keys.hpp"
#include "results/tables.hpp"

namespace tokbench::comm {

inline constexpr const char* kCommSchema = results::comm_document_key::schema_name;
inline constexpr int kCommSchemaVersion = results::comm_document_key::schema_version_now;

// One collective at one size, as measured on one rank; after the ranks have compared notes
// (keep_slowest_rank), every iteration's time is the slowest rank's and `correct` holds on
// every rank.
struct MeasuredPoint {
  Collective collective = Collective::all_reduce;
  SizePoint size;
  std::vector<double> seconds;  // the measured iterations, warm-up left out
  bool correct = true;          // the checked run's result was the expected one
  // On CPU ranks: the process's CPU seconds (every thread: Gloo's workers and the calling one)
  // and the wall seconds over the timed calls, summed over the ranks after keep_slowest_rank.
  // Their ratio is how many cores a rank's collective keeps busy (0 and 0: not measured, GPU).
  double cpu_seconds = 0;
  double wall_seconds = 0;
};

// How busy a rank's Gloo collectives keep a core: the ranks' CPU seconds over their wall
// seconds, summed over every point (so weighted by time, as the long collectives that matter to
// an iteration weigh most); nullopt when no point measured it.
std::optional<double> gloo_busy_fraction(const std::vector<MeasuredPoint>& points);

// The document: the benchmark's shape, the environment (`tokbench run`'s environment object),
// and one result per point, sorted by the collective's name and then by size.
nlohmann::ordered_json comm_document(const CommPlan& plan, const std::vector<MeasuredPoint>& points,
                                     int threads_per_rank, const nlohmann::ordered_json& environment);

// The flat table of a document: one row per result (its `results`).
results::FlatTable comm_table(const nlohmann::ordered_json& document);

}  // namespace tokbench::comm
