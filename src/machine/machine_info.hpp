// What this machine offers a run, probed without LibTorch: CUDA devices (through
// tokbench::cuda), system memory from /proc/meminfo, the CPU, and the launcher's
// environment. Validation reads this struct, so tests can hand it a pretend machine.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "machine/calibration_cache.hpp"
#include "cuda/device_query.hpp"
#include "machine/dist_env.hpp"

namespace tokbench::machine {

struct MachineInfo {
  std::vector<cuda::CudaDeviceInfo> cuda_devices;  // empty when none is usable
  std::string cuda_status = "not probed";            // why none is usable, or "ok"
  int64_t mem_total_bytes = 0;                       // /proc/meminfo MemTotal
  int64_t mem_available_bytes = 0;                   // /proc/meminfo MemAvailable
  // This process's cgroup memory limit, when one is set (the tightest over the cgroup and
  // its ancestors, v2 or v1): its limit, usage and limit - usage. The CPU memory check
  // takes the smaller of MemAvailable and cgroup_available_bytes.
  std::optional<int64_t> cgroup_available_bytes;
  int64_t cgroup_limit_bytes = 0;
  int64_t cgroup_usage_bytes = 0;
  std::string cpu_model;
  // `tokbench env --calibrate`'s cached measurements (every machine and thread count in the
  // cache file; resolve picks the one of this run's key), and the intra-op thread count a
  // run without --num-threads gets (at::get_num_threads(); set by the caller, as probing
  // stays torch-free; 0: unknown, then no calibration matches without --num-threads).
  std::vector<CpuCalibration> cpu_calibrations;
  int default_threads = 0;
  // Where this process sits in a distributed job (torchrun / Slurm / Open MPI variables),
  // or why those variables are not valid (then resolve refuses the run).
  DistEnv dist_env;
  std::string dist_env_error;
};

MachineInfo probe_machine();

// Bytes for a /proc/meminfo key ("MemAvailable"), or nullopt.
std::optional<int64_t> read_meminfo_bytes(const std::string& key);

// --- cgroup memory limits: pure parsing, the files handed in (tests pass their own) ---

// A memory limit file's value: bytes, or nullopt for "max" (v2), v1's "unlimited" (a value
// of 2^62 or more: LONG_MAX rounded down to a page) and anything unreadable.
std::optional<int64_t> parse_cgroup_bytes(const std::string& text);

// The tightest memory limit found for a process.
struct CgroupMemory {
  int64_t limit_bytes = 0;
  int64_t usage_bytes = 0;
  int64_t available_bytes = 0;  // max(0, limit - usage)
  std::string limit_file;       // e.g. /sys/fs/cgroup/memory.max
};

// Returns a file's contents, or nullopt when it does not exist or cannot be read.
using FileReader = std::function<std::optional<std::string>(const std::string& path)>;

// From /proc/self/cgroup's text: for the v2 entry ("0::/path") reads
// ROOT/path/memory.max and memory.current, for a v1 memory entry ("N:...memory...:/path")
// ROOT/memory/path/memory.limit_in_bytes and memory.usage_in_bytes, at the process's cgroup
// and each ancestor up to ROOT (a limit higher up binds too; inside a container the path is
// the host's, and only ROOT itself exists). Returns the level with the least headroom
// (limit - usage), or nullopt when no limit is set anywhere.
std::optional<CgroupMemory> cgroup_memory_limit(const std::string& proc_self_cgroup, const FileReader& read_file,
                                                const std::string& root = "/sys/fs/cgroup");

}  // namespace tokbench::machine
