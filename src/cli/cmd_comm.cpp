// `tokbench comm`: collectives (all-reduce, all-gather, reduce-scatter, broadcast) over a size
// sweep, on the process groups `tokbench run`'s ranks use, started by the same launchers, with
// nccl-tests' figures (src/comm, docs/comm.md). Options are resolved before any rank starts; a
// bad one is one line and exit 2.
#include <cstdlib>
#include <memory>

#include "distributed/node_launch.hpp"
#include "machine/machine_info.hpp"
#include "cli/command.hpp"
#include "comm/comm_options.hpp"
#include "comm/comm_plan.hpp"
#include "comm/run_comm.hpp"

namespace tokbench::cli {
namespace {

const RegisterCommand kComm{
    {"comm", "Benchmark collectives (all-reduce, all-gather, reduce-scatter, broadcast) over a range of sizes",
     [](CLI::App& sub) -> std::function<int()> {
       auto options = std::make_shared<comm::CommOptions>();
       comm::add_comm_options(sub, *options);
       sub.footer("Figures as nccl-tests defines them: time per operation (the slowest rank's), algbw = size / time, "
                  "busbw = algbw x the collective's factor (docs/comm.md). Many ranks: --nproc-per-node N (built-in "
                  "launcher), or torchrun --no-python / srun / mpirun around `tokbench comm`.");
       return [options] {
         // A rank started by the built-in launcher measures; it does not launch again.
         if (std::getenv(distributed::kLaunchedEnv) != nullptr) options->nproc_per_node.reset();
         const comm::CommPlan plan = comm::resolve_comm(*options, machine::probe_machine());
         if (options->nproc_per_node) return comm::launch_comm(plan, distributed::own_command_line());
         return comm::run_comm_rank(plan);
       };
     }}};

}  // namespace
}  // namespace tokbench::cli
