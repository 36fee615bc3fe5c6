// The canonical JSON result of one run (docs/run.md, "The JSON result"): the reference
// benchmark's keys first, with the meanings of docs/PERFORMANCE.md, "The contract", then
// tokbench's own (units in key names). Unknown figures are null. Written atomically: a
// temporary file in the same directory, then rename.
#pragma once

#include <filesystem>

#include <nlohmann/json.hpp>

#include "bench/environment.hpp"
#include "bench/metrics.hpp"
#include "bench/resolve.hpp"

namespace tokbench::bench {

inline constexpr int kResultSchemaVersion = 2;  // 2: world_size, ranks[], config.dist*

nlohmann::ordered_json build_result_json(const RunPlan& plan, const MeasuredRun& run, const BenchMetrics& metrics,
                                         const Environment& env);

// Throws std::runtime_error when the file cannot be written; never leaves a partial file.
void write_json_atomically(const std::filesystem::path& path, const nlohmann::ordered_json& json);

}  // namespace tokbench::bench
