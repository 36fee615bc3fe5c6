// Executes a validated RunPlan: builds the model on its device, trains it through the train
// layer with progress output, then reports and writes the JSON result — also when the run
// ended in OOM, NaN, an interruption or an error. Returns the process exit code.
#pragma once

#include "run/run_plan.hpp"

namespace tokbench::run {

int run_benchmark(const RunPlan& plan);

}  // namespace tokbench::run
