// `tokbench run`'s work, below the command line: probe the machine, resolve the options into a
// plan (resolve.hpp: every refusal before any work), print the plan's warnings once, then launch
// the ranks (--nproc-per-node), run a Python executor, or run tokbench's own step. cli registers
// the command (cli/cmd_run.cpp).
#pragma once

#include "run/run_options.hpp"

namespace tokbench::run {

// The run's exit code (docs/run.md's table). A rank started by the built-in launcher runs; it
// does not launch again (its nproc_per_node is cleared).
int run_command(RunOptions& options);

}  // namespace tokbench::run
