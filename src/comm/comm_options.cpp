// CLI11 registration of CommOptions and their checks alone. Numbers go through the same
// parse-time checks as `tokbench run`'s (plain decimal integers, finite reals); the options that
// are run's rows are registered from them (config/rows.hpp); every other check is
// check_comm_options', so that every usage error has the one-line shape.
#include "comm/comm_options.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "comm/comm_figures.hpp"
#include "config/numbers.hpp"
#include "config/rows.hpp"
#include "config/run_options.hpp"
#include "usage/usage_error.hpp"

namespace tokbench::comm {
namespace {

using usage::printable;
using usage::refuse;
using usage::require_choice;

// --min-bytes, --max-bytes: "4096", "1K", "64M" within 1 byte .. 1T.
int64_t byte_size(const char* option, const std::string& text) {
  const auto bytes = parse_byte_size(text);
  if (!bytes || *bytes > comm_limits::kMaxBytes)
    refuse(fmt::format("{} '{}' is not valid; valid: a size from 1 to 1T in bytes, or with K, M or G (x1024), "
                      "e.g. 4096, 1K, 64M",
                      option, printable(text)));
  return *bytes;
}

void check_collectives(const std::string& list) {
  std::string valid;
  for (Collective c : kCollectives) valid += std::string(valid.empty() ? "" : ", ") + to_string(c);
  std::vector<Collective> named;
  std::size_t start = 0;
  while (start <= list.size()) {
    const std::size_t comma = std::min(list.find(',', start), list.size());
    const std::string name = list.substr(start, comma - start);
    const auto collective = collective_from_string(name);
    if (!collective)
      refuse(fmt::format("--collectives: '{}' is not a collective; valid: a comma-separated list of {}", printable(name),
                        valid));
    if (std::find(named.begin(), named.end(), *collective) != named.end())
      refuse(fmt::format("--collectives: '{}' is named twice; valid: each of {} at most once", name, valid));
    named.push_back(*collective);
    start = comma + 1;
  }
}

}  // namespace

void check_comm_options(const CommOptions& o) {
  // Each option alone from its row, then the launcher's pairs, as `tokbench run`.
  config::check_rows(o, comm_rows());
  config::check_launcher(o);
  require_choice("--device", o.device, {"cpu", "cuda"});
  require_choice("--backend", o.backend, {"auto", "gloo", "nccl"});
  if (o.backend == "nccl" && o.device != "cuda")
    refuse("--backend nccl needs --device cuda (NCCL moves GPU memory only); valid with --device cpu: auto, gloo");
  check_collectives(o.collectives);
  require_choice("--dtype", o.dtype, {"float32", "bfloat16", "float16"});
  const int64_t min_bytes = byte_size("--min-bytes", o.min_bytes);
  // Without --max-bytes the largest size is the device's default (64M on cpu, 1G on cuda).
  const std::string max_text = o.max_bytes.empty() ? (o.device == "cuda" ? "1G" : "64M") : o.max_bytes;
  const int64_t max_bytes = byte_size("--max-bytes", max_text);
  if (min_bytes > max_bytes)
    refuse(fmt::format("--min-bytes {} is larger than --max-bytes {}; valid: --min-bytes <= --max-bytes", o.min_bytes,
                      o.max_bytes.empty() ? byte_size_text(max_bytes) + " (the default)" : o.max_bytes));
  if (o.step_factor < 2 || o.step_factor > comm_limits::kMaxStepFactor)
    refuse(fmt::format("--step-factor {} is not valid; valid: a whole number 2..{}", o.step_factor,
                      comm_limits::kMaxStepFactor));
  if (o.iters < 1 || o.iters > comm_limits::kMaxIters)
    refuse(fmt::format("--iters {} is not valid; valid: 1..{}", o.iters, comm_limits::kMaxIters));
  if (o.warmup_iters < 0 || o.warmup_iters > comm_limits::kMaxIters)
    refuse(fmt::format("--warmup-iters {} is not valid; valid: 0..{}", o.warmup_iters, comm_limits::kMaxIters));
  require_choice("--compute-sharing", o.compute_sharing, {"on", "off"});
}

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
