// `tokbench sweep --predict CLUSTER`: every multi-rank row of the matrix also gets a prediction
// (src/predict, docs/predict.md) from its one-rank run, shown as its own executor column
// ("eager predicted") beside the measured one, so one table holds both. The one-rank run is the
// matrix's own row where it has one, else a row the sweep adds and runs. With --predict-only the
// multi-rank rows are not run at all: their only record is the prediction (status "predicted"),
// for rows this machine cannot run (more ranks or nodes than it has). docs/sweep.md, "Predicted
// columns".
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <cstdio>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "predict/prediction.hpp"
#include "sweep/matrix.hpp"

namespace tokbench::sweep {

// What the sweep runs and shows.
struct PredictedSweep {
  std::vector<sweep::Configuration> rows;        // the table's rows: each added source before its first user
  std::vector<sweep::Configuration> to_run;      // rows, less the multi-rank ones under --predict-only
  std::map<std::string, std::string> source_of;  // multi-rank row id -> its one-rank source's id
  std::set<std::string> added_sources;           // sources the matrix did not hold
  std::set<std::string> unpredictable;           // multi-rank rows without a source (ranks or batch not numbers)
};

PredictedSweep plan_predicted_sweep(const std::vector<sweep::Configuration>& configs, bool predict_only);

// The cluster a row of `world_size` ranks is predicted on: the preset or file, or for
// `measured` the comm document measured at that world size (nullptr: none was given).
struct SweepCluster {
  std::string spec;                                       // as --predict named it
  std::optional<predict::ClusterInput> fixed;              // a preset or a TOML file
  std::map<int64_t, predict::ClusterInput> measured;       // --predict measured: by world size
  const predict::ClusterInput* for_world_size(int64_t world_size) const;
  std::string device() const;                             // "cpu" or "cuda"
};

// Reads --predict and --comm; throws std::invalid_argument (one line) for an unknown preset, an
// unreadable file, `measured` without --comm, --comm without `measured`, two documents of one
// world size.
SweepCluster load_sweep_cluster(const std::string& spec, const std::vector<std::string>& comm_documents);

// The report's records: each row's run record as the sweep gathered it (`runs`, by
// sweep_config_id), and after each multi-rank row its prediction (compiler "<executor>
// predicted", sweep_config_id "<row id>-predicted"). A row that cannot be predicted still gets a record in that column, saying why:
// status "invalid" when the prediction refuses its options, "not_predicted" when its one-rank
// source did not finish. A prediction beside a finished measurement holds
// `prediction.measured_average_iter_time` and `prediction.error` ((predicted - measured) /
// measured). Progress, and the mean and largest error, go to `progress` (null: none).
std::vector<nlohmann::json> join_predictions(const PredictedSweep& plan, const std::vector<nlohmann::json>& runs,
                                             const SweepCluster& cluster, std::FILE* progress);

}  // namespace tokbench::sweep
