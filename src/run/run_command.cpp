// `tokbench run`'s work (run_command.hpp).
#include "run/run_command.hpp"

#include <ATen/Parallel.h>

#include <cstdio>
#include <cstdlib>

#include "distributed/node_launch.hpp"
#include "machine/machine_info.hpp"
#include "run/launch_benchmark.hpp"
#include "run/python_executor.hpp"
#include "run/resolve.hpp"
#include "run/run_benchmark.hpp"

namespace tokbench::run {

int run_command(RunOptions& options) {
  // A rank started by the built-in launcher runs; it does not launch again.
  if (std::getenv(distributed::kLaunchedEnv) != nullptr) options.nproc_per_node.reset();
  machine::MachineInfo machine = machine::probe_machine();
  machine.default_threads = at::get_num_threads();  // the calibration key of a run without --num-threads
  RunPlan plan = resolve_run(options, machine);
  // Once per run: rank 0 (a launcher's ranks resolve again, and its rank 0 prints them).
  if (!options.nproc_per_node && plan.dist.env.rank == 0)
    for (const auto& warning : plan.warnings) std::fprintf(stderr, "tokbench: warning: %s\n", warning.c_str());
  if (options.nproc_per_node) return launch_benchmark(plan, distributed::own_command_line());
  if (is_python(plan.compiler.executor)) return run_python_benchmark(plan);
  return run_benchmark(plan);
}

}  // namespace tokbench::run
