// `tokbench env`: what this machine offers a benchmark. LibTorch version and build flags, the
// CPU (model, vector ISA, cores) with its estimated peak FLOP/s per dtype, and every CUDA
// device with its memory and the matched datasheet peak per dtype, or a plain "no peak known".
// --calibrate measures the CPU's achievable matmul FLOP/s (calibrate_peak.hpp) and caches it
// for `tokbench run`'s CPU MFU; without it the cached calibration for this machine is shown.
#include <memory>

#include "cli/command.hpp"
#include "run/env_report.hpp"
#include "run/run_options.hpp"

namespace tokbench::cli {
namespace {

const RegisterCommand kEnv{{"env",
                            "Report LibTorch, the CPU and CUDA devices with their peak FLOP/s per dtype",
                            [](CLI::App& sub) -> std::any {
                              auto o = std::make_shared<run::EnvOptions>();
                              sub.add_flag("--verbose,-v", o->verbose, "Print LibTorch's whole build configuration");
                              sub.add_flag("--calibrate", o->calibrate,
                                           "Measure the CPU's matmul FLOP/s per dtype and cache it for CPU MFU");
                              sub.add_option("--num-threads,--num_threads", o->num_threads,
                                             "Intra-op threads to calibrate (and show) for (0: LibTorch's default)")
                                  ->transform(run::whole_number<int>("0..1024 (0: LibTorch's default)"))
                                  ->check(CLI::Range(0, run::limits::kMaxThreads));
                              return o;
                            }}};

}  // namespace
}  // namespace tokbench::cli
