// A resolved run as one JSON document: what a child process that trains the same run reads
// instead of re-parsing options (the Python step, python_executor.hpp). Its `options` member is
// every option as given, by its record key (config::options_json, defaults filled); the rest is
// only what resolution decided (the model, batch shape, this rank's place, the layout, the
// executor, the device, paths, test hooks), keyed by train/run_plan_keys.hpp.
#pragma once

#include <nlohmann/json.hpp>

#include "run/run_plan.hpp"

namespace tokbench::run {

nlohmann::ordered_json to_json(const RunPlan& plan);

}  // namespace tokbench::run
