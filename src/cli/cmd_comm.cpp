// `tokbench comm`: collectives (all-reduce, all-gather, reduce-scatter, broadcast) over a size
// sweep, on the process groups `tokbench run`'s ranks use, started by the same launchers, with
// nccl-tests' figures (src/comm, docs/comm.md). Options are resolved before any rank starts; a
// bad one is one line and exit 2.
#include <memory>

#include "cli/command.hpp"
#include "comm/comm_options.hpp"

namespace tokbench::cli {
namespace {

const RegisterCommand kComm{
    {"comm", "Benchmark collectives (all-reduce, all-gather, reduce-scatter, broadcast) over a range of sizes",
     [](CLI::App& sub) -> std::any {
       auto options = std::make_shared<comm::CommOptions>();
       comm::add_comm_options(sub, *options);
       sub.footer("Figures as nccl-tests defines them: time per operation (the slowest rank's), algbw = size / time, "
                  "busbw = algbw x the collective's factor (docs/comm.md). Many ranks: --nproc-per-node N (built-in "
                  "launcher), or torchrun --no-python / srun / mpirun around `tokbench comm`.");
       // The options alone as soon as the line is read: `tokbench` refuses a bad one before the
       // engine (and LibTorch) starts; resolve_comm checks them again, then the machine.
       sub.callback([options] { comm::check_comm_options(*options); });
       return options;
     }}};

}  // namespace
}  // namespace tokbench::cli
