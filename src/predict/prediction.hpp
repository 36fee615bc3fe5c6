// `tokbench predict`'s model end to end: a measured run, a cluster and the run options that
// change → a run record with `tokbench run`'s keys (status "predicted") and a `prediction`
// object saying how it was reached (docs/predict.md). Torch-free.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "predict/cluster.hpp"
#include "predict/comm_measurements.hpp"
#include "predict/cpu_contention.hpp"
#include "predict/measured_run.hpp"
#include "predict/memory_rate.hpp"
#include "predict/optimizer_model.hpp"
#include "predict/target_options.hpp"

namespace tokbench::predict {

// The cluster and, for `--cluster measured`, its comm document.
struct ClusterInput {
  Cluster cluster;
  std::optional<CommMeasurements> measured;
  // More comm documents, of other world sizes: hybrid sharding's groups (S ranks per shard
  // group, W/S per replica group) are timed from the one measured at their size.
  std::vector<CommMeasurements> group_measurements;
  // CPU clusters: the copy rates the step's own copies and the optimizer are timed with, for
  // `ranks` per node. Where none is given for the predicted ranks per node, `measure_memory`
  // (tokbench predict sets it to measure_memory_rate) measures them on the machine at hand;
  // without either the step's copies are counted but not timed, and the record says so (the
  // library's callers, a sweep's predictions: the same runs then give the same prediction).
  std::optional<MemoryRate> memory_rate{};
  std::function<MemoryRate(int64_t ranks)> measure_memory{};
  // The optimizer's per-tensor and per-element costs on the machine at hand (the command probes
  // tokbench's AdamW); unset: the optimizer follows the elements alone.
  std::optional<OptimizerCostRates> optimizer_cost{};
  // The machine state the run's compute is read at: its own, or the comm document's moment
  // (reference_level.hpp).
  ComputeLevel compute_level = ComputeLevel::run;
};

// Builds the `measured` cluster from a comm document: its device, its ranks per node, the
// document's collective times (and `groups`' for groups of their sizes).
ClusterInput measured_cluster(CommMeasurements measurements, std::vector<CommMeasurements> groups = {});

// Throws std::invalid_argument with one line (exit 2) for every option the prediction cannot
// honour: values `tokbench run` would refuse, a micro-batch other than the measured one, a
// device kind other than the measured one, more ranks per node than the cluster has, a world
// size the comm document was not measured at.
results::RunRecord predict_record(const MeasuredRun& run, const ClusterInput& cluster, const TargetOptions& options,
                                  const CpuContentionFactors& factors = {});
// The predicted record as JSON: results::to_json of the above.
nlohmann::ordered_json predict(const MeasuredRun& run, const ClusterInput& cluster, const TargetOptions& options,
                               const CpuContentionFactors& factors = {});

}  // namespace tokbench::predict
