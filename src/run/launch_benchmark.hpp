// `tokbench run --nproc-per-node N`: this process starts the node's ranks (distributed/node_launch.hpp)
// running the same command line, waits for them, and makes sure the job ends with one
// labelled result: rank 0 writes it when it can; when rank 0 itself died, the launcher
// writes a JSON naming what happened, labelled by the rules of launch_outcome.hpp (the first
// failed rank's own status, such as `oom`, else `rank_failed`). Returns the exit code.
#pragma once

#include <string>
#include <vector>

#include "run/run_plan.hpp"

namespace tokbench::run {

int launch_benchmark(const RunPlan& plan, const std::vector<std::string>& rank_argv);

}  // namespace tokbench::run
