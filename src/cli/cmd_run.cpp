// `tokbench run`: one training-throughput benchmark. Options are registered from RunOptions; the
// work (command_work.cpp) is run/run_command.hpp's, whose validation throws std::invalid_argument
// (exit 2) before any work starts.
#include <memory>

#include "cli/command.hpp"
#include "config/checks.hpp"
#include "run/run_options.hpp"

namespace tokbench::cli {
namespace {

const RegisterCommand kRun{
    {"run", "Train one model configuration for a few steps and report its training throughput",
     [](CLI::App& sub) -> std::any {
       auto options = std::make_shared<run::RunOptions>();
       run::add_bench_options(sub, *options);
       sub.footer("Metrics are defined in docs/run.md and docs/PERFORMANCE.md. Exit codes: 0 ok, 1 error, "
                  "2 usage, 3 out of memory, 4 NaN loss, 5 interrupted, 6 timeout, 7 a rank failed, 8 tokbench's output "
                  "(the JSON, the memory snapshot) not written, 9 the runtime could not start.\n"
                  "Many ranks: --nproc-per-node N (built-in launcher), or torchrun --no-python / srun / mpirun "
                  "around `tokbench run`.");
       // Each option alone, from its row, as soon as the line is read: `tokbench` refuses a value
       // out of its bounds before the engine (and LibTorch) starts; resolve_run checks it again.
       sub.callback([options] { config::check_fields(*options); });
       return options;
     }}};

}  // namespace
}  // namespace tokbench::cli
