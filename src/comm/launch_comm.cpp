// The built-in launcher's side of `tokbench comm` (run_comm.hpp): the launcher `tokbench run`
// uses (distributed/launcher.hpp), the ranks marked as launched so that none launches again.
#include <cstdlib>

#include "bench/launch_benchmark.hpp"
#include "comm/run_comm.hpp"
#include "distributed/launcher.hpp"

namespace tokbench::comm {

int launch_comm(const CommPlan& plan, const std::vector<std::string>& rank_argv) {
  const CommOptions& o = plan.options;
  ::setenv(bench::kLaunchedEnv, "1", 1);
  dist::LaunchOptions launch;
  launch.argv = rank_argv;
  launch.nproc_per_node = static_cast<int>(*o.nproc_per_node);
  launch.nnodes = static_cast<int>(o.nnodes);
  launch.node_rank = static_cast<int>(o.node_rank);
  launch.master_addr = o.master_addr;
  launch.master_port = static_cast<int>(o.master_port);
  // A rank that outlives a failed one fails too at its next collective, or within
  // --dist-timeout when that collective hangs; once rank 0 has ended (it writes the report),
  // a rank still running is stopped or hung: 2 s, then SIGTERM (as `tokbench run`).
  launch.failure_grace_seconds = plan.timeout_seconds;
  launch.lead_exit_grace_seconds = 2.0;
  // The launcher has said which rank failed and how; the job ends with that rank's code.
  return dist::launch_ranks(launch).exit_code;
}

}  // namespace tokbench::comm
