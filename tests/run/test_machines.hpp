// The pretend machines the resolve suites run against, so their results do not depend on the
// host: a CPU-only machine with 16 GB, and the same with one H100 (80 GB, sm_90, 132 SMs).
#pragma once

#include "machine/machine_info.hpp"

namespace tokbench::run::testing {

inline machine::MachineInfo cpu_machine() {
  machine::MachineInfo m;
  m.cuda_status = "no CUDA driver";
  m.mem_total_bytes = 16'000'000'000;
  m.mem_available_bytes = 16'000'000'000;
  m.cpu_model = "Test CPU";
  return m;
}

inline machine::MachineInfo gpu_machine() {
  machine::MachineInfo m = cpu_machine();
  m.cuda_status = "ok";
  m.cuda_devices.push_back({0, "NVIDIA H100 80GB HBM3", 80'000'000'000, 9, 0, 132});
  return m;
}

}  // namespace tokbench::run::testing
