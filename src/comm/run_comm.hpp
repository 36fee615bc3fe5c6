// `tokbench comm` as one process runs it: either the built-in launcher's side (--nproc-per-node:
// start the node's ranks with the same command line, wait for them, report how the job ended),
// or one rank's (join the job's process groups, measure, and on rank 0 write the report, the
// JSON document and the stored result). Both return the process exit code.
#pragma once

#include <string>
#include <vector>

#include "comm/comm_plan.hpp"

namespace tokbench::comm {

// The launcher's side: distributed::launch_ranks, as `tokbench run --nproc-per-node` uses it.
int launch_comm(const CommPlan& plan, const std::vector<std::string>& rank_argv);

// One rank's side (also a process started alone: a world of one).
int run_comm_rank(const CommPlan& plan);

}  // namespace tokbench::comm
