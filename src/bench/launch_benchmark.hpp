// `tokbench run --nproc-per-node N`: this process starts the node's ranks (dist/launcher.hpp)
// running the same command line, waits for them, and makes sure the job ends with one
// labelled result: rank 0 writes it when it can; when rank 0 itself died, the launcher
// writes a JSON with status `rank_failed` naming what happened. Returns the exit code.
#pragma once

#include <string>
#include <vector>

#include "bench/resolve.hpp"

namespace tokbench::bench {

// Set in every rank's environment by the launcher, so a rank does not launch again.
inline constexpr const char* kLaunchedEnv = "TOKBENCH_LAUNCHED";

int launch_benchmark(const RunPlan& plan, const std::vector<std::string>& rank_argv);

// This process's command line (from /proc/self/cmdline), argv[0] replaced by the absolute
// path of the running executable, so ranks run the same binary.
std::vector<std::string> own_command_line();

}  // namespace tokbench::bench
