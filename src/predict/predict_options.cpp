// predict_options.hpp.
#include "predict/predict_options.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "predict/cluster.hpp"
#include "results/tables.hpp"

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
            "with --cluster measured: the JSON tokbench comm wrote, then any others of the same machine, repeated "
            "or separated with commas: hybrid sharding's group sizes', and on a CPU one measured with a core per "
            "rank's threads, whose Gloo busy fraction the contention model prefers (docs/predict.md)")
 ->delimiter(',');
  sub.add_option("--probes-from", o.probes_from,
                 "CPU: reuse the copy rate and AdamW costs an earlier prediction measured (its --format json "
                 "output) instead of probing this machine now: the same inputs then give the same prediction");
  sub.add_option("--compute-level", o.compute_level,
                 "CPU, --cluster measured: the machine state the run's compute is read at: run (its own) or "
                 "comm-document (carried by the reference GEMM both timed to the --comm document's moment: steadier "
                 "between runs minutes apart on a host whose speed drifts, less accurate where the measured run's "
                 "moment is another; docs/predict.md)")
      ->capture_default_str();
  add_target_options(sub, t);
  sub.add_option("--measured-cores", t.measured_cores,
                 "CPU: cores of the machine the run was measured on (default: the record's, else the cluster's)");
  sub.add_option("--cores-per-node", t.cores_per_node, "CPU: cores of a cluster node (overrides the cluster's)");
  sub.add_option("--format", o.format,
                 "output format: print, csv, json, markdown, html, xlsx (the sweep's reporters)")
      ->capture_default_str();
  sub.add_option("--output", o.output, "write the report to FILE (html and xlsx need it)");
  sub.footer("Exit codes: 0 predicted, 2 usage (one line naming the problem). docs/predict.md says how.");
}

void check_predict_options(const PredictCommandOptions& o) {
  check_target_options(o.target);
  compute_level_from_string(o.compute_level);
  const results::ReporterPlugin& format = results::format_from_string(o.format);
  if (format.file == results::FileUse::required && o.output.empty())
    throw std::invalid_argument(fmt::format("--format {} writes a file: name it with --output FILE", format.name));
}

}  // namespace tokbench::predict
