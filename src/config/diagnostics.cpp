// The diagnostics section's option table (diagnostics.hpp).
#include "config/diagnostics.hpp"

#include <fmt/format.h>

#include <limits>

#include "config/numbers.hpp"
#include "config/row_record_keys.hpp"
#include "config/run_options.hpp"
#include "usage/usage_error.hpp"

namespace tokbench::config {

const std::vector<Field>& diagnostics_fields() {
  static const std::vector<Field> fields{
      {.names = "--profile",
       .member = &DiagnosticsSection::profile_path,
       .help = "write a Chrome trace (Kineto) of --profile-iters iterations run after the measured window; with "
               "several ranks each writes its own, PATH with _rankN before the extension",
       .group = "Output"},
      {.names = "--profile-iters,--profile_iters",
       .member = &DiagnosticsSection::profile_iters,
       .help = "iterations in the --profile trace (default 3)",
       .group = "Output",
       .valid = fmt::format("a whole number 1..{}", limits::kMaxProfileIters)},
      {.names = "--dump-memory-snapshot,--dump_memory_snapshot",
       .member = &DiagnosticsSection::dump_memory_snapshot,
       .help = "write the timed loop's allocation history in PyTorch's memory snapshot format (pytorch.org/memory_viz) "
               "to MODEL_COMPILE_MODE[...].pickle here, as the reference names it (each rank its own, _rankN); "
               "CUDA: c10's allocator history; CPU: tokbench's counting allocator (=True/False)",
       .group = "Output",
       .record = {"dump_memory_snapshot", 34}},
      {.names = "--dump-thunder-traces,--dump_thunder_traces",
       .member = &DiagnosticsSection::dump_thunder_traces,
       .help = "with a thunder --compile: print thunder's last forward and backward traces after the run, as the "
               "reference (=True/False)",
       .group = "Output",
       .record = {"dump_thunder_traces", 35}},
      {.names = "--unit-timing-iters,--unit_timing_iters",
       .member = &DiagnosticsSection::unit_timing_iters,
       .help = "iterations after the measured window that time each unit (embedding, blocks, head) for the "
               "JSON's unit_timings; 0: none (default 2; 0 with the Python executors)",
       .group = "Output",
       .valid = fmt::format("a whole number 0..{}", limits::kMaxUnitTimingIters),
       .bounds = {.min = 0,
                  .max = limits::kMaxUnitTimingIters,
                  .refusal = fmt::format("is not valid; valid: 0..{} (0: no per-unit timings)", limits::kMaxUnitTimingIters)}},
      {.names = "--time-account-iters,--time_account_iters",
       .member = &DiagnosticsSection::time_account_iters,
       .help = "iterations after the measured window run under the profiler to split the iteration time into "
               "GEMMs, attention, norms, elementwise, loss, optimizer, data/host, ... for the JSON's time_account "
               "and the report's waterfall (docs/time-account.md); 0: none (default 2 on the CPU: eager and "
               "fused on one rank or every rank of DDP and FSDP, the Python executors on one rank; else 0)",
       .group = "Output",
       .valid = fmt::format("a whole number 0..{}", limits::kMaxTimeAccountIters),
       .record = {"time_account_iters", 42}},
      {.names = "--cpu-memory-cap-mb,--cpu_memory_cap_mb",
       .member = &DiagnosticsSection::cpu_memory_cap_mb,
       .help = "testing aid: cap CPU tensor memory (MB) to exercise the out-of-memory path",
       .group = "Testing",
       .valid = fmt::format("a whole number of MB 1..{}", std::numeric_limits<int64_t>::max() / 1000000),
       .bounds = {.positive = true,
                  .max = static_cast<double>(std::numeric_limits<int64_t>::max() / 1000000),
                  .refusal = fmt::format("overflows int64 in bytes; valid: 1..{}",
                                         std::numeric_limits<int64_t>::max() / 1000000)},
       .record = {config_key::cpu_memory_cap_mb, 32},
       .shapes = {.label = "cpu_cap_mb", .record_key = config_key::cpu_memory_cap_mb, .in_config = true, .place = 28}},
      {.names = "--cpu-memory-cap-rank,--cpu_memory_cap_rank",
       .member = &DiagnosticsSection::cpu_memory_cap_rank,
       .help = "testing aid: apply --cpu-memory-cap-mb on this rank only",
       .group = "Testing",
       .valid = "a rank from 0 to the world size - 1",
       .record = {config_key::cpu_memory_cap_rank, 29},
       .shapes = {.label = "cpu_cap_rank", .record_key = config_key::cpu_memory_cap_rank, .in_config = true, .place = 29}},
  };
  return fields;
}

void check_diagnostics(const DiagnosticsSection& o) {
  if (o.profile_iters && o.profile_path.empty())
    usage::refuse(fmt::format("--profile-iters {} needs --profile PATH; valid: --profile PATH --profile-iters 1..{}",
                              *o.profile_iters, limits::kMaxProfileIters));
  if (o.profile_iters && (*o.profile_iters < 1 || *o.profile_iters > limits::kMaxProfileIters))
    usage::refuse(fmt::format("--profile-iters {} is not valid; valid: 1..{}", *o.profile_iters, limits::kMaxProfileIters));
  if (o.time_account_iters && (*o.time_account_iters < 0 || *o.time_account_iters > limits::kMaxTimeAccountIters))
    usage::refuse(fmt::format("--time-account-iters {} is not valid; valid: 0..{} (0: no time account)",
                              *o.time_account_iters, limits::kMaxTimeAccountIters));
}

}  // namespace tokbench::config
