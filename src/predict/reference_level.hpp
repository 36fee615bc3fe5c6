// The machine state a prediction's compute is read at. The one-rank run records a fixed GEMM
// timed beside its window (`reference_probe`), the comm document the same GEMM alone on one rank
// (`compute_sharing.alone_ms`). By default the compute stays at the run's own level and the ratio
// of the two is only recorded; with `--compute-level comm-document` the units' times are
// multiplied by the document's over the run's, so two predictions from runs minutes apart, made
// with one comm document, are made at one machine state (docs/predict.md, "The compute's level").
// Torch-free.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>

#include "predict/comm_measurements.hpp"
#include "results/record_blocks.hpp"

namespace tokbench::predict {

// Which machine state the run's compute is read at (`tokbench predict --compute-level`).
enum class ComputeLevel {
  run,           // the one-rank run's own: what it measured (the default)
  comm_document  // carried by the reference GEMM to the comm document's moment
};

// "run", "comm-document": the option's values.
const char* to_string(ComputeLevel level);
// The value of `text`, or std::invalid_argument naming the valid ones.
ComputeLevel compute_level_from_string(const std::string& text);

struct ReferenceLevel {
  ComputeLevel chosen = ComputeLevel::run;
  bool applied = false;
  double scale = 1;  // the comm document's GEMM time / the run's median probe time
  std::string why;   // when not applied
  // The run's probe: its products' median and quartiles (ms) and how many; the document's time.
  double run_median_ms = 0, run_q1_ms = 0, run_q3_ms = 0;
  int64_t run_repeats = 0;
  double comm_ms = 0;
  int64_t gemm_size = 0, threads = 0;
  std::string comm_source;
  // The scale's uncertainty from the run's probe: were its level its Q3 (Q1), the scale would be
  // this much lower (higher), relative; 0 when not applied.
  double relative_below() const;
  double relative_above() const;
};

// `probe`: the record's `reference_probe` (not ran: absent in older records, or none ran);
// `comm`: the leading comm document, or nullptr (no --cluster measured). Applied only where
// `chosen` is comm_document and both timed the same GEMM (size) on the same intra-op threads;
// otherwise `why`. Both levels' figures are filled wherever the two compare, applied or not.
ReferenceLevel reference_level(const results::ReferenceProbeBlock& probe, const CommMeasurements* comm,
                               ComputeLevel chosen = ComputeLevel::run);

// {"applied", "scale", "run_probe_median_ms", "run_probe_q1_ms", "run_probe_q3_ms",
// "run_probe_repeats", "comm_alone_ms", "comm_document", "gemm_size", "threads", "measured",
// "assumed", "rule"}, or {"applied": false, "scale": 1, "why"} with "compute_level" and, where the
// two GEMMs compare, "comm_over_run" and both times.
nlohmann::ordered_json to_json(const ReferenceLevel& level);

}  // namespace tokbench::predict
