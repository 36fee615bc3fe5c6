// Reading the run's reference probe against the comm document's (reference_level.hpp).
#include "predict/reference_level.hpp"

#include <fmt/format.h>

#include <cmath>
#include <optional>
#include <stdexcept>

#include "predict/prediction_keys.hpp"

namespace tokbench::predict {

namespace pk = prediction_key;

namespace {

// A recorded figure > 0 and finite, else 0.
double positive(const std::optional<double>& v) { return v && std::isfinite(*v) && *v > 0 ? *v : 0; }

}  // namespace

const char* to_string(ComputeLevel level) { return level == ComputeLevel::run ? "run" : "comm-document"; }

ComputeLevel compute_level_from_string(const std::string& text) {
  if (text == to_string(ComputeLevel::run)) return ComputeLevel::run;
  if (text == to_string(ComputeLevel::comm_document)) return ComputeLevel::comm_document;
  throw std::invalid_argument(fmt::format("--compute-level '{}': not a level; valid: run, comm-document", text));
}

double ReferenceLevel::relative_below() const {
  return applied && run_q3_ms > 0 ? std::max(0.0, 1.0 - run_median_ms / run_q3_ms) : 0.0;
}

double ReferenceLevel::relative_above() const {
  return applied && run_q1_ms > 0 ? std::max(0.0, run_median_ms / run_q1_ms - 1.0) : 0.0;
}

ReferenceLevel reference_level(const results::ReferenceProbeBlock& probe, const CommMeasurements* comm,
                               ComputeLevel chosen) {
  ReferenceLevel level;
  level.chosen = chosen;
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
  if (chosen == ComputeLevel::run) {
    // Carried to the document's moment, predictions were less accurate on six of seven saved
    // validation runs (docs/predict.md, "The compute's level"): the document's GEMM is one moment
    // of a long run, and read 0.8-7.5% above a one-rank probe right after it on a quiet machine.
    level.why = fmt::format("the run's own (--compute-level run, the default); the comm document's GEMM took {:.2f} ms "
                            "against the run's {:.2f} ms (x {:.3f}), which --compute-level comm-document applies",
                            level.comm_ms, level.run_median_ms, level.comm_ms / level.run_median_ms);
    return level;
  }
  level.applied = true;
  level.scale = level.comm_ms / level.run_median_ms;
  return level;
}

nlohmann::ordered_json to_json(const ReferenceLevel& l) {
  if (!l.applied) {
    nlohmann::ordered_json j{{pk::compute_level, to_string(l.chosen)}, {pk::applied, false}, {pk::scale, 1.0}, {pk::why, l.why}};
    if (l.comm_ms > 0 && l.run_median_ms > 0) {  // both read, not applied: the ratio a user may want to see
      j[pk::comm_over_run] = l.comm_ms / l.run_median_ms;
      j[pk::run_probe_median_ms] = l.run_median_ms;
      j[pk::comm_alone_ms] = l.comm_ms;
      j[pk::comm_document] = l.comm_source;
    }
    return j;
  }
  return {{pk::compute_level, to_string(l.chosen)},
          {pk::applied, true},
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
