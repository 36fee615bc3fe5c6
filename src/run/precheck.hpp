// Checking a `tokbench run` command line before it runs, with the run's own parser and
// resolve_run, so a sweep's `--dry-run` and its rows say what `tokbench run` would say.
//
// Here (precheck_run_here): the machine the run will start on, as `tokbench run` probes it.
//
// Elsewhere (precheck_run_options): a sweep submitting to Slurm refuses an invalid configuration before it queues a job, from
// the submitting host, which may have no GPU and a different amount of memory. So the check
// sees the job's rank layout (as srun will set it) and a node whose hardware is unknown: GPUs
// when the options ask for CUDA, memory unlimited. What depends on the node (does the model
// fit, is there a GPU) is left to the run, which still exits 2 there.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "machine/machine_info.hpp"

namespace tokbench::run {

struct RankLayout {
  int64_t nodes = 1;
  int64_t ranks_per_node = 1;
};

// Empty when the options pass; otherwise the one line `tokbench run` would print for them.
std::string precheck_run_options(const std::vector<std::string>& run_arguments, const RankLayout& layout);

// The same against this machine (probe_machine(), probed once by the caller for every
// configuration of a sweep): what `tokbench run` with these arguments would refuse here.
std::string precheck_run_here(const std::vector<std::string>& run_arguments, const machine::MachineInfo& here);

}  // namespace tokbench::run
