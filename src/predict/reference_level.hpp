// The one-rank run's compute carried to the comm document's moment: the run records a fixed GEMM
// timed beside its window (`reference_probe`), the comm document the same GEMM alone on one rank
// (`compute_sharing.alone_ms`); the units' times are multiplied by the document's over the run's,
// so two predictions from runs minutes apart, made with one comm document, are made at one
// machine state (docs/predict.md, "The reference probe"). Torch-free.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>

#include "predict/comm_measurements.hpp"
#include "results/record_blocks.hpp"

namespace tokbench::predict {

struct ReferenceLevel {
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
// `comm`: the leading comm document, or nullptr (no --cluster measured). Applied only where both
// timed the same GEMM (size) on the same intra-op threads; otherwise `why`.
ReferenceLevel reference_level(const results::ReferenceProbeBlock& probe, const CommMeasurements* comm);

// {"applied", "scale", "run_probe_median_ms", "run_probe_q1_ms", "run_probe_q3_ms",
// "run_probe_repeats", "comm_alone_ms", "comm_document", "gemm_size", "threads", "measured",
// "assumed", "rule"}, or {"applied": false, "scale": 1, "why"}.
nlohmann::ordered_json to_json(const ReferenceLevel& level);

}  // namespace tokbench::predict
