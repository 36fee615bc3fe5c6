// Reading the run's reference probe against the comm document's (reference_level.hpp).
#include "predict/reference_level.hpp"

#include <fmt/format.h>

#include <cmath>
#include <optional>

#include "predict/prediction_keys.hpp"

namespace tokbench::predict {

namespace pk = prediction_key;

namespace {

// A recorded figure > 0 and finite, else 0.
double positive(const std::optional<double>& v) { return v && std::isfinite(*v) && *v > 0 ? *v : 0; }

}  // namespace

double ReferenceLevel::relative_below() const {
  return applied && run_q3_ms > 0 ? std::max(0.0, 1.0 - run_median_ms / run_q3_ms) : 0.0;
}

double ReferenceLevel::relative_above() const {
  return applied && run_q1_ms > 0 ? std::max(0.0, run_median_ms / run_q1_ms - 1.0) : 0.0;
}

ReferenceLevel reference_level(const results::ReferenceProbeBlock& probe, const CommMeasurements* comm) {
  ReferenceLevel level;
  if (!probe.ran) {
    level.why = probe.why ? fmt::format("the run recorded no reference probe ({})", *probe.why)
                          : "the run's record has no reference probe (a tokbench before it recorded one)";
    return level;
  }
  level.run_median_ms = positive(probe.median_ms);
  level.run_q1_ms = positive(probe.q1_ms);
  level.run_q3_ms = positive(probe.q3_ms);
  level.run_repeats = probe.repeats.value_or(0);
  level.gemm_size = probe.gemm_size.value_or(0);
  level.threads = probe.threads.value_or(0);
  if (!(level.run_median_ms > 0) || level.gemm_size < 1 || level.threads < 1) {
    level.why = "the run's reference_probe lacks a median_ms (> 0), gemm_size or threads";
    return level;
  }
  if (!level.run_q1_ms || level.run_q1_ms > level.run_median_ms) level.run_q1_ms = level.run_median_ms;
  if (!level.run_q3_ms || level.run_q3_ms < level.run_median_ms) level.run_q3_ms = level.run_median_ms;
  if (!comm) {
    level.why = "no comm document (--cluster measured --comm) to level the run against";
    return level;
  }
  level.comm_source = comm->source;
  if (!comm->compute_sharing || !comm->compute_sharing->alone_seconds) {
    level.why = fmt::format("the comm document '{}' records no compute_sharing.alone_ms (a GPU document, or one run "
                            "with a single rank)",
                            comm->source);
    return level;
  }
  const auto& s = *comm->compute_sharing;
  if (s.gemm_size != level.gemm_size || s.threads_per_rank != level.threads) {
    level.why = fmt::format("the comm document's GEMM ({} on {} thread(s)) is not the run's probe ({} on {} thread(s)): "
                            "their times do not compare",
                            s.gemm_size ? fmt::format("n = {}", *s.gemm_size) : std::string("n unknown"),
                            s.threads_per_rank, fmt::format("n = {}", level.gemm_size), level.threads);
    return level;
  }
  level.comm_ms = *s.alone_seconds * 1e3;
  level.applied = true;
  level.scale = level.comm_ms / level.run_median_ms;
  return level;
}

nlohmann::ordered_json to_json(const ReferenceLevel& l) {
  if (!l.applied) return {{pk::applied, false}, {pk::scale, 1.0}, {pk::why, l.why}};
  return {{pk::applied, true},
          {pk::scale, l.scale},
          {pk::run_probe_median_ms, l.run_median_ms},
          {pk::run_probe_q1_ms, l.run_q1_ms},
          {pk::run_probe_q3_ms, l.run_q3_ms},
          {pk::run_probe_repeats, l.run_repeats},
          {pk::comm_alone_ms, l.comm_ms},
          {pk::comm_document, l.comm_source},
          {pk::gemm_size, l.gemm_size},
          {pk::threads, l.threads},
          {pk::measured, "the run's reference probe (a fixed GEMM before its warm-up and after its window) and the comm "
                         "document's compute_sharing.alone_ms (the same GEMM alone on one rank)"},
          {pk::assumed, "the run's compute moves with the machine's moment as the GEMM does, so scaling it by the "
                        "GEMM's ratio gives the compute at the comm document's moment"},
          {pk::rule, "each unit's forward, backward and optimizer seconds x (comm_alone_ms / run_probe_median_ms), "
                     "after the window-median level (unit_timings_level)"}};
}

}  // namespace tokbench::predict
