// `tokbench sweep`: a matrix of `tokbench run` configurations (a TOML file and/or run options
// with comma-separated values), each run in its own processes, the results as the reference's
// pivoted tables in any format, kept in the result store. Resumable: run the same command
// again after an interruption and only the unfinished configurations run. --launcher slurm
// submits each configuration as a Slurm job instead (sweep/slurm_jobs.hpp).
#include <memory>

#include "cli/command.hpp"
#include "sweep/sweep_options.hpp"

namespace tokbench::cli {
namespace {

const RegisterCommand kSweep{
    {"sweep", "Run a matrix of `tokbench run` configurations and print the reference's comparison tables",
     [](CLI::App& sub) -> std::any {
       auto line = std::make_shared<sweep::SweepCommandLine>();
       line->handles = sweep::add_sweep_options(sub, line->options);
       // The sweep's own options alone as soon as the line is read, before the engine starts
       // and before the matrix file is read; run_sweep_command checks them again first.
       sub.callback([line] { sweep::check_sweep_choices(line->options, line->handles.slurm_options_given()); });
       return line;
     }}};

}  // namespace
}  // namespace tokbench::cli
