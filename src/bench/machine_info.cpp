// Probing the machine for validation: cheap, no LibTorch, no allocation on a device.
#include "bench/machine_info.hpp"

#include <cstdlib>
#include <fstream>
#include <sstream>

namespace tokbench::bench {

std::optional<int64_t> read_meminfo_bytes(const std::string& key) {
  std::ifstream in("/proc/meminfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(key + ":", 0) != 0) continue;
    std::istringstream fields(line.substr(key.size() + 1));
    int64_t kib = 0;
    if (fields >> kib) return kib * 1024;  // /proc/meminfo's "kB" are KiB
  }
  return std::nullopt;
}

static std::string read_cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) {
      auto colon = line.find(':');
      if (colon != std::string::npos) return line.substr(line.find_first_not_of(" \t", colon + 1));
    }
  }
  return "unknown CPU";
}

MachineInfo probe_machine() {
  MachineInfo info;
  device::CudaReport cuda = device::query_cuda();
  info.cuda_status = cuda.status;
  if (cuda.status == "ok") info.cuda_devices = cuda.devices;
  info.mem_total_bytes = read_meminfo_bytes("MemTotal").value_or(0);
  info.mem_available_bytes = read_meminfo_bytes("MemAvailable").value_or(info.mem_total_bytes);
  info.cpu_model = read_cpu_model();
  try {
    info.dist_env = dist::read_dist_env(dist::process_environment());
  } catch (const std::invalid_argument& e) {
    info.dist_env_error = e.what();
  }
  return info;
}

}  // namespace tokbench::bench
