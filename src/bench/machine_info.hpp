// What this machine offers a run, probed without LibTorch: CUDA devices (through
// tokbench::device), system memory from /proc/meminfo, the CPU, and the launcher's
// environment. Validation reads this struct, so tests can hand it a pretend machine.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cuda/device_query.hpp"
#include "dist/dist_env.hpp"

namespace tokbench::bench {

struct MachineInfo {
  std::vector<device::CudaDeviceInfo> cuda_devices;  // empty when none is usable
  std::string cuda_status = "not probed";            // why none is usable, or "ok"
  int64_t mem_total_bytes = 0;                       // /proc/meminfo MemTotal
  int64_t mem_available_bytes = 0;                   // /proc/meminfo MemAvailable
  std::string cpu_model;
  // Where this process sits in a distributed job (torchrun / Slurm / Open MPI variables),
  // or why those variables are not valid (then resolve refuses the run).
  dist::DistEnv dist_env;
  std::string dist_env_error;
};

MachineInfo probe_machine();

// Bytes for a /proc/meminfo key ("MemAvailable"), or nullopt.
std::optional<int64_t> read_meminfo_bytes(const std::string& key);

}  // namespace tokbench::bench
