// `tokbench env`'s work, below the command line: what this machine offers a benchmark. LibTorch
// version and build flags, the CPU (model, vector ISA, cores) with its estimated peak FLOP/s per
// dtype and the cached calibration, and every CUDA device with its memory and the matched
// datasheet peak per dtype, or a plain "no peak known". With `calibrate` it measures the CPU's
// achievable matmul FLOP/s instead (calibrate_peak.hpp) and caches it for `tokbench run`'s CPU
// MFU. cli registers the command (cli/cmd_env.cpp).
#pragma once

#include <ostream>

namespace tokbench::run {

struct EnvOptions {
  bool verbose = false;    // LibTorch's whole build configuration
  bool calibrate = false;  // measure and cache the CPU's peak instead of reporting
  int num_threads = 0;     // intra-op threads to report (and calibrate) for; 0: LibTorch's default
};

// False when a calibration could not be saved (said on stderr).
bool write_env_report(const EnvOptions& options, std::ostream& out);

}  // namespace tokbench::run
