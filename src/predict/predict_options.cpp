// predict_options.hpp.
#include "predict/predict_options.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "predict/cluster.hpp"

namespace tokbench::predict {

void add_predict_options(CLI::App& sub, PredictCommandOptions& o) {
  TargetOptions& t = o.target;
  sub.add_option("--from", o.from,
                 "the measured run: its JSON (tokbench run --json-path), a sweep's JSON (every finished run), or "
                 "STORE.sqlite:SWEEP_ID")
      ->required();
  sub.add_option("--cluster", o.cluster,
                 fmt::format("the cluster: a preset ({}), a FILE.toml, or measured (collective times from --comm)",
                             fmt::join(cluster_preset_names(), ", ")))
      ->required();
  sub.add_option("--comm", o.comm,
            "with --cluster measured: the JSON tokbench comm wrote (for hybrid sharding also its group sizes': "
            "repeat, or separate with commas)")
 ->delimiter(',');
  sub.add_option("--probes-from", o.probes_from,
                 "an earlier prediction's JSON: reuse its copy rate and AdamW costs instead of probing this machine "
                 "(to make the same prediction again, e.g. bench/predict_replay.py)");
  sub.add_option("--nproc-per-node", t.nproc_per_node,
                 "ranks per node (default: the measured run's ranks on one machine, at most the cluster's devices)");
  sub.add_option("--nnodes", t.nnodes, "nodes (default 1)");
  sub.add_option("--distributed-mode", t.distributed_mode, "none, ddp or fsdp (default: the measured run's)");
  sub.add_option("--shard-mode", t.shard_mode, "fsdp: zero2, zero3, hybrid_zero2, hybrid_zero3");
  sub.add_option("--sharding-size", t.sharding_size, "fsdp: ranks per shard group (hybrid sharding)");
  sub.add_option("--bucketing-mode", t.bucketing_mode,
                 "fsdp units: none (the whole model), block, or size (modules cut by parameter count, ZeRO-2)");
  sub.add_option("--fsdp-bucket-params,--fsdp_bucket_params", t.fsdp_bucket_params,
                 "--bucketing-mode size: the parameter count that makes a module a unit (default: the measured "
                 "run's, else 1e8)");
  sub.add_option("--global-batch-size", t.global_batch_size,
                 "sequences per iteration, all ranks (default: the measured GA kept: micro x GA x ranks)");
  sub.add_option("--micro-batch-size", t.micro_batch_size,
                 "only the measured run's (compute per micro-batch is measured, not modelled)");
  sub.add_option("--ddp-bucket-size", t.ddp_bucket_size_mb, "ddp: bucket size in MB (default: the measured run's)");
  sub.add_option("--num-threads", t.num_threads, "CPU: intra-op threads per rank (0: every core)");
  sub.add_option("--measured-cores", t.measured_cores,
                 "CPU: cores of the machine the run was measured on (default: the record's, else the cluster's)");
  sub.add_option("--cores-per-node", t.cores_per_node, "CPU: cores of a cluster node (overrides the cluster's)");
  sub.add_option("--format", o.format,
                 "output format: print, csv, json, markdown, html, xlsx (the sweep's reporters)")
      ->capture_default_str();
  sub.add_option("--output", o.output, "write the report to FILE (html and xlsx need it)");
  sub.footer("Exit codes: 0 predicted, 2 usage (one line naming the problem). docs/predict.md says how.");
}

}  // namespace tokbench::predict
