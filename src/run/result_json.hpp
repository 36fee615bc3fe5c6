// The result record of one run (docs/run.md, "The JSON result"): the keys and their order are
// the column table's (results/result_columns.hpp), the reference benchmark's keys first, with
// the meanings of docs/PERFORMANCE.md, "The contract", then tokbench's own (units in key
// names). Unknown figures are null. The printed report (results/run_report.hpp) and every sweep
// format read this record. Written atomically: a temporary file in the same directory, then
// rename.
#pragma once

#include <filesystem>

#include <nlohmann/json.hpp>

#include "machine/environment.hpp"
#include "run/metrics.hpp"
#include "run/run_plan.hpp"
#include "results/result_columns.hpp"
#include "results/run_record.hpp"

namespace tokbench::run {

inline constexpr int kResultSchemaVersion = results::kSchemaVersion;

// The run's record; build_result_json is its JSON (results::to_json).
results::RunRecord build_run_record(const RunPlan& plan, const MeasuredRun& run, const BenchMetrics& metrics,
                                    const machine::Environment& env);

nlohmann::ordered_json build_result_json(const RunPlan& plan, const MeasuredRun& run, const BenchMetrics& metrics,
                                         const machine::Environment& env);

// Throws std::runtime_error when the file cannot be written; never leaves a partial file.
void write_json_atomically(const std::filesystem::path& path, const nlohmann::ordered_json& json);

}  // namespace tokbench::run
