// `tokbench run`: one training-throughput benchmark (src/bench). Options are registered from
// BenchOptions; validation throws std::invalid_argument (exit 2) before any work starts.
#include <ATen/Parallel.h>

#include "bench/bench_options.hpp"
#include "bench/launch_benchmark.hpp"
#include "bench/machine_info.hpp"
#include "bench/python_executor.hpp"
#include "bench/resolve.hpp"
#include "bench/run_benchmark.hpp"
#include "cli/command.hpp"

#include <cstdlib>
#include <memory>

namespace tokbench::cli {
namespace {

const RegisterCommand kRun{
    {"run", "Train one model configuration for a few steps and report its training throughput",
     [](CLI::App& sub) -> std::function<int()> {
       auto options = std::make_shared<bench::BenchOptions>();
       bench::add_bench_options(sub, *options);
       sub.footer("Metrics are defined in docs/run.md and docs/PERFORMANCE.md. Exit codes: 0 ok, 1 error, "
                  "2 usage, 3 out of memory, 4 NaN loss, 5 interrupted, 6 timeout, 7 a rank failed.\n"
                  "Many ranks: --nproc-per-node N (built-in launcher), or torchrun --no-python / srun / mpirun "
                  "around `tokbench run`.");
       return [options] {
         // A rank started by the built-in launcher runs; it does not launch again.
         if (std::getenv(bench::kLaunchedEnv) != nullptr) options->nproc_per_node.reset();
         bench::MachineInfo machine = bench::probe_machine();
         machine.default_threads = at::get_num_threads();  // the calibration key of a run without --num-threads
         const bench::RunPlan plan = bench::resolve_run(*options, machine);
         if (options->nproc_per_node) return bench::launch_benchmark(plan, bench::own_command_line());
         if (bench::is_python(plan.compiler.executor)) return bench::run_python_benchmark(plan);
         return bench::run_benchmark(plan);
       };
     }}};

}  // namespace
}  // namespace tokbench::cli
