// `tokbench run`: one training-throughput benchmark (src/bench). Options are registered from
// RunOptions; validation throws std::invalid_argument (exit 2) before any work starts.
#include <ATen/Parallel.h>

#include "run/run_options.hpp"
#include "distributed/node_launch.hpp"
#include "run/launch_benchmark.hpp"
#include "machine/machine_info.hpp"
#include "run/python_executor.hpp"
#include "run/resolve.hpp"
#include "run/run_benchmark.hpp"
#include "cli/command.hpp"

#include <cstdio>
#include <cstdlib>
#include <memory>

namespace tokbench::cli {
namespace {

const RegisterCommand kRun{
    {"run", "Train one model configuration for a few steps and report its training throughput",
     [](CLI::App& sub) -> std::function<int()> {
       auto options = std::make_shared<run::RunOptions>();
       run::add_bench_options(sub, *options);
       sub.footer("Metrics are defined in docs/run.md and docs/PERFORMANCE.md. Exit codes: 0 ok, 1 error, "
                  "2 usage, 3 out of memory, 4 NaN loss, 5 interrupted, 6 timeout, 7 a rank failed, 8 tokbench's output "
                  "(the JSON, the memory snapshot) not written, 9 the runtime could not start.\n"
                  "Many ranks: --nproc-per-node N (built-in launcher), or torchrun --no-python / srun / mpirun "
                  "around `tokbench run`.");
       return [options] {
         // A rank started by the built-in launcher runs; it does not launch again.
         if (std::getenv(distributed::kLaunchedEnv) != nullptr) options->nproc_per_node.reset();
         machine::MachineInfo machine = machine::probe_machine();
         machine.default_threads = at::get_num_threads();  // the calibration key of a run without --num-threads
         run::RunPlan plan = run::resolve_run(*options, machine);
         // Once per run: rank 0 (a launcher's ranks resolve again, and its rank 0 prints them).
         if (!options->nproc_per_node && plan.dist.env.rank == 0)
           for (const auto& warning : plan.warnings) std::fprintf(stderr, "tokbench: warning: %s\n", warning.c_str());
         if (options->nproc_per_node) return run::launch_benchmark(plan, distributed::own_command_line());
         if (run::is_python(plan.compiler.executor)) return run::run_python_benchmark(plan);
         return run::run_benchmark(plan);
       };
     }}};

}  // namespace
}  // namespace tokbench::cli
