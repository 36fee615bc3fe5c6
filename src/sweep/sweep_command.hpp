// `tokbench sweep`'s whole command, from its parsed options to its exit code: cli registers
// it, this runs it. It reaches into run (each configuration is checked as `tokbench run`
// checks its options, on this machine or a Slurm node, and runs as this same binary), so it
// is a target of its own: the sweep's torch-free core (matrix, runner, compare) links without
// LibTorch.
#pragma once

#include <string>
#include <vector>

#include "sweep/sweep_options.hpp"

namespace tokbench::sweep {

// `run_options` are the words after the sweep's own options (run options with comma lists);
// `slurm_options_given`: whether any --slurm-* option was on the command line (it picks the
// launcher when --launcher is not given). Throws std::invalid_argument for a usage error.
int run_sweep_command(const SweepCommandOptions& o, const std::vector<std::string>& run_options,
                      bool slurm_options_given);

}  // namespace tokbench::sweep
