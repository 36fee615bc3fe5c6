// The options of `tokbench comm`, one struct whose member initialisers are the defaults --help
// prints. Values here are raw user input; comm_plan.hpp turns them into a validated CommPlan.
// The launcher's options, --num-threads and --dist-timeout are `tokbench run`'s rows (config/),
// registered and checked here as there.
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "config/field.hpp"
#include "config/device.hpp"
#include "config/launcher.hpp"
#include "config/parallelism.hpp"

namespace tokbench::comm {

// Launcher: config's section (as `tokbench run`'s): when nproc_per_node is set, this process
// starts the node's ranks.
struct CommOptions : config::LauncherSection {
  // What is measured.
  std::string device = "cpu";   // cpu | cuda (each rank the GPU of its local rank)
  std::string backend = "auto";  // auto: gloo on cpu, nccl on cuda
  std::string collectives = "all_reduce,all_gather,reduce_scatter,broadcast";
  std::string min_bytes = "1K";
  std::string max_bytes;  // empty: 64M on cpu (quick on a small machine), 1G on cuda
  int64_t step_factor = 2;
  std::string dtype = "float32";
  int64_t iters = 20;
  int64_t warmup_iters = 5;
  // on: after the collectives, CPU ranks time how much they slow each other's compute (about
  // 10 s at two ranks; `tokbench predict` scales CPU compute by it); off: the document's
  // compute_sharing is null and predict falls back to its fitted model (docs/comm.md).
  std::string compute_sharing = "on";
  // `tokbench run`'s defaults: torch.distributed's timeout; intra-op threads per rank (0: LibTorch's).
  double dist_timeout_s = config::ParallelismSection{}.dist_timeout_s;
  int num_threads = config::DeviceSection{}.num_threads;
  // Output.
  std::string format = "print";
  std::string output;
  std::string store;  // empty: not stored
};

// Upper bounds past which a benchmark would not end in useful time or memory.
namespace comm_limits {
inline constexpr int64_t kMaxIters = 100'000;       // --iters, --warmup-iters
inline constexpr int64_t kMaxStepFactor = 1 << 20;  // --step-factor
inline constexpr int64_t kMaxBytes = int64_t{1} << 40;  // --max-bytes: 1T
}  // namespace comm_limits

// Registers every option on `app`, bound to `options`.
void add_comm_options(CLI::App& app, CommOptions& options);

// Refuses (usage::UsageError: one line naming the option, the value and what is valid) the
// first option that is wrong on its own or beside another option, whatever the machine: the
// rows, the launcher's pairs, the choices, the sizes and counts. `tokbench` calls it as soon as
// the line is read; resolve_comm (comm_plan.hpp) calls it first, then checks what needs the
// machine (devices, memory, the folders named).
void check_comm_options(const CommOptions& options);

// The options that are `tokbench run`'s rows (the launcher's, --num-threads, --dist-timeout),
// bound to CommOptions: what add_comm_options registers of them and what resolve_comm checks.
const std::vector<const config::FieldOf<CommOptions>*>& comm_rows();

}  // namespace tokbench::comm
