// CLI11 registration of CommOptions. Numbers go through the same parse-time checks as `tokbench
// run`'s (plain decimal integers, finite reals); every other check is comm_plan.cpp's, so that
// every usage error has the one-line shape.
#include "comm/comm_options.hpp"

#include <fmt/format.h>

#include "config/numbers.hpp"

namespace tokbench::comm {

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
  app.add_option("--num-threads,--num_threads", o.num_threads,
                 "intra-op threads of each rank, as `tokbench run --num-threads` (0: LibTorch's default); they "
                 "run the compute-sharing probe (docs/comm.md)")
      ->transform(whole_number<int>(fmt::format("a whole number 0..{}", config::limits::kMaxThreads)))
      ->group("Benchmark");
  app.add_option("--device", o.device, "cpu | cuda (cuda: each rank the GPU of its local rank)")->group("Benchmark");
  app.add_option("--backend", o.backend, "auto | gloo | nccl (auto: gloo on cpu, nccl on cuda; nccl needs cuda)")
      ->group("Benchmark");
  app.add_option("--dist-timeout,--dist_timeout", o.dist_timeout_s,
                 "seconds the rendezvous and any collective may take before the benchmark fails with 'timeout'")
      ->transform(finite_number("seconds from 1 to 604800"))->group("Benchmark");
  // Launcher (torchrun's options), as `tokbench run`
  app.add_option("--nproc-per-node,--nproc_per_node", o.nproc_per_node,
                 "start this many ranks on this node (the built-in launcher)")
      ->transform(whole_number<int64_t>(fmt::format("a whole number 1..{}", config::limits::kMaxRanksPerNode)))
      ->group("Launcher");
  app.add_option("--nnodes", o.nnodes, "nodes in the job (with --nproc-per-node)")
      ->transform(whole_number<int64_t>(fmt::format("a whole number 1..{}", config::limits::kMaxNodes)))
      ->group("Launcher");
  app.add_option("--node-rank,--node_rank", o.node_rank, "this node's index, 0..nnodes-1")
      ->transform(whole_number<int64_t>("a whole number from 0 to --nnodes - 1"))->group("Launcher");
  app.add_option("--master-addr,--master_addr", o.master_addr, "address of rank 0's store")->group("Launcher");
  app.add_option("--master-port,--master_port", o.master_port, "port of rank 0's store (0: a free one; one node only)")
      ->transform(whole_number<int64_t>("0 (a free port) or 1..65535"))->group("Launcher");
  // Output
  app.add_option("--format", o.format, "print | csv | json | markdown | xlsx | html (the sweep's formats)")
      ->group("Output");
  app.add_option("--output", o.output, "write the report to this file (atomically; needed by xlsx)")->group("Output");
  app.add_option("--store", o.store, "also save the result into this SQLite result store (created if missing)")
      ->group("Output");
}

}  // namespace tokbench::comm
