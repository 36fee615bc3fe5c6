// What a benchmark of collectives found, as figures, as the JSON document other tools read
// (schema "tokbench-comm", docs/comm.md), and as the flat table every report format writes.
// Torch-free.
#pragma once

#include <nlohmann/json.hpp>

#include <vector>

#include "comm/comm_figures.hpp"
#include "comm/comm_plan.hpp"
#include "results/tables.hpp"

namespace tokbench::comm {

inline constexpr const char* kCommSchema = "tokbench-comm";
inline constexpr int kCommSchemaVersion = 1;

// One collective at one size, as measured on one rank; after the ranks have compared notes
// (keep_slowest_rank), every iteration's time is the slowest rank's and `correct` holds on
// every rank.
struct MeasuredPoint {
  Collective collective = Collective::all_reduce;
  SizePoint size;
  std::vector<double> seconds;  // the measured iterations, warm-up left out
  bool correct = true;          // the checked run's result was the expected one
};

// The document: the benchmark's shape, the environment (`tokbench run`'s environment object),
// and one result per point, sorted by the collective's name and then by size.
nlohmann::ordered_json comm_document(const CommPlan& plan, const std::vector<MeasuredPoint>& points,
                                     int threads_per_rank, const nlohmann::ordered_json& environment);

// The flat table of a document: one row per result (its `results`).
results::FlatTable comm_table(const nlohmann::ordered_json& document);

}  // namespace tokbench::comm
