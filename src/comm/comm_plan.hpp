// `tokbench comm`'s options resolved against this machine and the launcher's environment: a
// CommPlan, or one usage error (std::invalid_argument, one line naming the option, the value and
// what is valid; exit 2). The launcher and every rank resolve the same options the same way, so
// a bad value ends the job before any rank starts or waits for another. Creates no file and
// touches no device.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "machine/machine_info.hpp"
#include "comm/comm_figures.hpp"
#include "comm/comm_options.hpp"
#include "distributed/dist_settings.hpp"
#include "results/tables.hpp"

namespace tokbench::comm {

struct CommPlan {
  CommOptions options;
  // Where this process sits: a rank's own place, or (in the built-in launcher) the job's shape
  // with the node's first rank.
  machine::DistEnv env;
  int64_t world_size = 1;
  int64_t nnodes = 1;
  int64_t nproc_per_node = 1;
  bool cuda = false;
  int device_index = 0;     // cuda: the GPU of this rank's local rank
  std::string device_name;  // the CPU model, or this rank's GPU
  distributed::CommBackend backend = distributed::CommBackend::gloo;
  std::string dtype = "float32";  // float32 | bfloat16 | float16
  int64_t element_bytes = 4;
  std::vector<Collective> collectives;  // in the order given, each once
  std::vector<int64_t> sizes;           // requested sizes, ascending
  int64_t iters = 20;
  int64_t warmup_iters = 5;
  int num_threads = 0;  // 0: LibTorch's default
  bool compute_sharing = true;  // CPU ranks only: measured after the collectives (docs/comm.md)
  double timeout_seconds = 1800;
  const results::ReporterPlugin* format = nullptr;
  std::filesystem::path output;  // empty: standard output
  std::filesystem::path store;   // empty: not stored
};

CommPlan resolve_comm(const CommOptions& options, const machine::MachineInfo& machine);

// Bytes one rank holds at most: its largest collective's input and output at the largest size,
// and the correctness check's temporaries (an int64 index and two values per element).
int64_t peak_bytes_per_rank(int64_t max_bytes, int64_t element_bytes);

}  // namespace tokbench::comm
