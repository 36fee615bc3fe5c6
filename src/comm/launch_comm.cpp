// The built-in launcher's side of `tokbench comm` (run_comm.hpp): the launcher `tokbench run`
// uses (distributed/launcher.hpp), the ranks marked as launched so that none launches again.
#include "comm/run_comm.hpp"
#include "distributed/launcher.hpp"
#include "distributed/node_launch.hpp"

namespace tokbench::comm {

int launch_comm(const CommPlan& plan, const std::vector<std::string>& rank_argv) {
  // The launcher has said which rank failed and how; the job ends with that rank's code.
  return distributed::launch_ranks(distributed::node_launch(plan.options, rank_argv, plan.timeout_seconds)).exit_code;
}

}  // namespace tokbench::comm
