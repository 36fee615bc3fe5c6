// A resolved run as one JSON document, made of its records as they are (the loop's options,
// the distributed settings, the compiler choice, the device): what a child process that trains
// the same run reads instead of re-parsing options (the Python step, python_executor.hpp).
// Field names are the records' own (train.seq_len, dist.mode, ...).
#pragma once

#include <nlohmann/json.hpp>

#include "run/run_plan.hpp"

namespace tokbench::run {

nlohmann::ordered_json to_json(const RunPlan& plan);

}  // namespace tokbench::run
