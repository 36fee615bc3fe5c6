// `tokbench comm`'s work (comm_command.hpp).
#include "comm/comm_command.hpp"

#include <cstdlib>

#include "comm/comm_plan.hpp"
#include "comm/run_comm.hpp"
#include "distributed/node_launch.hpp"
#include "machine/machine_info.hpp"

namespace tokbench::comm {

int comm_command(CommOptions& options) {
  if (std::getenv(distributed::kLaunchedEnv) != nullptr) options.nproc_per_node.reset();
  const CommPlan plan = resolve_comm(options, machine::probe_machine());
  if (options.nproc_per_node) return launch_comm(plan, distributed::own_command_line());
  return run_comm_rank(plan);
}

}  // namespace tokbench::comm
