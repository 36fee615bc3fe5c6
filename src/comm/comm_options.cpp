// CLI11 registration of CommOptions. Numbers go through the same parse-time checks as `tokbench
// run`'s (plain decimal integers, finite reals); the options that are run's rows are registered
// from them (config/rows.hpp); every other check is comm_plan.cpp's, so that every usage error
// has the one-line shape.
#include "comm/comm_options.hpp"

#include <fmt/format.h>

#include "config/numbers.hpp"
#include "config/rows.hpp"
#include "config/run_options.hpp"

namespace tokbench::comm {

const std::vector<const config::FieldOf<CommOptions>*>& comm_rows() {
  using config::rebind;
  using config::row_of;
  static const std::vector<config::FieldOf<CommOptions>> rows = [] {
    std::vector<config::FieldOf<CommOptions>> all;
    for (const auto& row : config::launcher_fields()) all.push_back(rebind<CommOptions>(row));
    // run's rows with comm's help (what the threads and the timeout mean here).
    all.push_back(rebind(row_of(config::device_fields(), &config::DeviceSection::num_threads), &CommOptions::num_threads,
                         "intra-op threads of each rank, as `tokbench run --num-threads` (0: LibTorch's default); "
                         "they run the compute-sharing probe (docs/comm.md)",
                         "Benchmark"));
    all.push_back(rebind(row_of(config::parallelism_fields(), &config::ParallelismSection::dist_timeout_s),
                         &CommOptions::dist_timeout_s,
                         "seconds the rendezvous and any collective may take before the benchmark fails with 'timeout'",
                         "Benchmark"));
    return all;
  }();
  static const std::vector<const config::FieldOf<CommOptions>*> pointers = [] {
    std::vector<const config::FieldOf<CommOptions>*> all;
    for (const auto& row : rows) all.push_back(&row);
    return all;
  }();
  return pointers;
}

void add_comm_options(CLI::App& app, CommOptions& o) {
  using config::finite_number;
  using config::whole_number;
  app.option_defaults()->always_capture_default();
  // A repeated option takes its last value, as `tokbench run`'s.
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  // What is measured
  app.add_option("--collectives", o.collectives,
                 "comma-separated: all_reduce, all_gather, reduce_scatter, broadcast")->group("Benchmark");
  app.add_option("--min-bytes,--min_bytes", o.min_bytes,
                 "smallest size: bytes, or with K/M/G (x1024, as nccl-tests' -b); what size means for each "
                 "collective: docs/comm.md")->group("Benchmark");
  app.add_option("--max-bytes,--max_bytes", o.max_bytes,
                 "largest size (default 64M on cpu, 1G on cuda)")->group("Benchmark");
  app.add_option("--step-factor,--step_factor", o.step_factor, "each size is the previous one times this (>= 2)")
      ->transform(whole_number<int64_t>(fmt::format("a whole number 2..{}", comm_limits::kMaxStepFactor)))
      ->group("Benchmark");
  app.add_option("--dtype", o.dtype, "element type: float32 | bfloat16 | float16")->group("Benchmark");
  app.add_option("--iters", o.iters, "measured iterations per collective and size")
      ->transform(whole_number<int64_t>(fmt::format("a whole number 1..{}", comm_limits::kMaxIters)))
      ->group("Benchmark");
  app.add_option("--warmup-iters,--warmup_iters", o.warmup_iters, "iterations run first and left out")
      ->transform(whole_number<int64_t>(fmt::format("a whole number 0..{}", comm_limits::kMaxIters)))
      ->group("Benchmark");
  app.add_option("--compute-sharing,--compute_sharing", o.compute_sharing,
                 "on | off: after the collectives, time how this node's CPU ranks slow each other's compute "
                 "(CPU only; about 10 s at two ranks; tokbench predict uses it, docs/comm.md)")
      ->group("Benchmark");
  const auto& rows = comm_rows();  // the launcher's five, then --num-threads and --dist-timeout
  config::register_rows(app, o, std::vector{rows[5]});
  app.add_option("--device", o.device, "cpu | cuda (cuda: each rank the GPU of its local rank)")->group("Benchmark");
  app.add_option("--backend", o.backend, "auto | gloo | nccl (auto: gloo on cpu, nccl on cuda; nccl needs cuda)")
      ->group("Benchmark");
  config::register_rows(app, o, std::vector{rows[6]});
  // Launcher (torchrun's options), as `tokbench run`
  config::register_rows(app, o, std::vector(rows.begin(), rows.begin() + 5));
  // Output
  app.add_option("--format", o.format, "print | csv | json | markdown | xlsx | html (the sweep's formats)")
      ->group("Output");
  app.add_option("--output", o.output, "write the report to this file (atomically; needed by xlsx)")->group("Output");
  app.add_option("--store", o.store, "also save the result into this SQLite result store (created if missing)")
      ->group("Output");
}

}  // namespace tokbench::comm
