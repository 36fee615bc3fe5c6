// `tokbench sweep --predict` (sweep_predictions.hpp).
#include "sweep/sweep_predictions.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "config/device.hpp"
#include "predict/cluster_keys.hpp"
#include "predict/cluster.hpp"
#include "predict/comm_measurements.hpp"
#include "predict/measured_run.hpp"
#include "predict/prediction_keys.hpp"
#include "predict/target_from_run_options.hpp"
#include "results/record_keys.hpp"
#include "results/run_record.hpp"
#include "results/record_status.hpp"
#include "sweep/option_rows.hpp"
#include "sweep/sweep_runner.hpp"

namespace tokbench::sweep {
namespace {

using nlohmann::json;

// Whether a row asks for more than one rank as written (a count that is not a number is
// `tokbench run`'s to refuse; it is still no one-rank row).
bool multi_rank(const sweep::Configuration& c) {
  return nproc_per_node_of(c) != "1" || nnodes_of(c) != "1";
}

int64_t ranks_of(const sweep::Configuration& c) {
  try {
    return std::stoll(nproc_per_node_of(c)) * std::stoll(nnodes_of(c));
  } catch (const std::exception&) {
    return 0;
  }
}

json options_json(const sweep::Configuration& c) {
  json options = json::object();
  for (const auto& [key, value] : c.options) options[key] = value;
  return options;
}

// A record in the predicted column that holds no prediction, and why.
// A prediction's own id: its row's, marked, so the store (one record per sweep and id) and
// `tokbench compare` (which pairs records by id) keep it apart from the row's measurement.
std::string predicted_id(const sweep::Configuration& c) { return c.id + "-predicted"; }

json unpredicted_row(const sweep::Configuration& c, const std::string& status, const std::string& message,
                     const std::string& compiler) {
  results::RunRecord row = sweep::synthesized_record(c, status, message);
  row.compiler = compiler + " predicted";
  row.sweep_config_id = predicted_id(c);
  row.sweep_options = results::Block(options_json(c));
  // Sorted keys, as the sweep's rows are written (synthesized_row).
  return json(results::to_json(row));
}

}  // namespace

PredictedSweep plan_predicted_sweep(const std::vector<sweep::Configuration>& configs, bool predict_only) {
  PredictedSweep plan;
  std::set<std::string> listed;
  for (const auto& c : configs) listed.insert(c.id);
  for (const auto& c : configs) {
    if (multi_rank(c)) {
      if (const auto source = sweep::one_rank_source(c)) {
        plan.source_of[c.id] = source->id;
        if (listed.insert(source->id).second) {
          plan.rows.push_back(*source);
          plan.added_sources.insert(source->id);
        }
      } else {
        plan.unpredictable.insert(c.id);
      }
    }
    plan.rows.push_back(c);
  }
  for (const auto& c : plan.rows)
    if (!(predict_only && multi_rank(c))) plan.to_run.push_back(c);
  return plan;
}

const predict::ClusterInput* SweepCluster::for_world_size(int64_t world_size) const {
  if (fixed) return &*fixed;
  const auto it = measured.find(world_size);
  return it == measured.end() ? nullptr : &it->second;
}

std::string SweepCluster::device() const {
  if (fixed) return fixed->cluster.device;
  return measured.empty() ? std::string() : measured.begin()->second.cluster.device;
}

SweepCluster load_sweep_cluster(const std::string& spec, const std::vector<std::string>& comm_documents) {
  SweepCluster cluster;
  cluster.spec = spec;
  if (spec != predict::cluster_key::measured_cluster) {
    if (!comm_documents.empty())
      throw std::invalid_argument(fmt::format("--comm applies to --predict measured only (cluster is '{}')", spec));
    try {
      cluster.fixed = predict::ClusterInput{predict::load_cluster(spec), std::nullopt, {}};
    } catch (const std::invalid_argument& e) {
      // The loader speaks of tokbench predict's --cluster; here the option is --predict.
      std::string line = e.what();
      if (line.rfind("--cluster ", 0) == 0) line.replace(0, 9, "--predict");
      throw std::invalid_argument(line);
    }
    return cluster;
  }
  if (comm_documents.empty())
    throw std::invalid_argument("--predict measured reads collective times from --comm COMM.json (tokbench comm wrote "
                                "it; one per world size the sweep predicts)");
  std::vector<predict::CommMeasurements> documents;
  for (const auto& path : comm_documents) {
    documents.push_back(predict::read_comm_document(path));
    predict::ClusterInput input = predict::measured_cluster(documents.back());
    const int64_t w = input.measured->world_size;
    if (cluster.measured.count(w) != 0)
      throw std::invalid_argument(fmt::format("--comm '{}' and '{}' were both measured over {} ranks; valid: one "
                                              "document per world size",
                                              cluster.measured.at(w).measured->source, path, w));
    if (!cluster.measured.empty() && cluster.measured.begin()->second.cluster.device != input.cluster.device)
      throw std::invalid_argument(fmt::format("--comm '{}' was measured on {}, the others on {}; valid: documents of "
                                              "one device kind",
                                              path, input.cluster.device, cluster.measured.begin()->second.cluster.device));
    cluster.measured.emplace(w, std::move(input));
  }
  // Hybrid sharding's groups are smaller than the world: each world's prediction may time them
  // from the documents of their sizes.
  for (auto& [w, input] : cluster.measured)
    for (const auto& d : documents)
      if (d.world_size != w) input.group_measurements.push_back(d);
  return cluster;
}

std::vector<json> join_predictions(const PredictedSweep& plan, const std::vector<json>& runs, const SweepCluster& cluster,
                                   std::FILE* progress) {
  // Each row typed (the rows passed the readers' checks when they were gathered), found by its id.
  std::vector<results::RunRecord> records;
  records.reserve(runs.size());
  for (const auto& run : runs) records.push_back(results::record_from_json(run));
  std::map<std::string, std::size_t> by_id;
  for (std::size_t i = 0; i < records.size(); ++i)
    if (const auto& id = records[i].sweep_config_id.value()) by_id[*id] = i;

  std::vector<json> out;
  int predicted = 0, not_predicted = 0;
  struct Error {
    double error;
    std::string row;
  };
  std::vector<Error> errors;
  for (const auto& c : plan.rows) {
    const auto own = by_id.find(c.id);
    const results::RunRecord* measured = own == by_id.end() ? nullptr : &records[own->second];
    if (measured) out.push_back(runs[own->second]);
    if (!multi_rank(c)) continue;

    const auto source_id = plan.source_of.find(c.id);
    const results::RunRecord* source = nullptr;
    if (source_id != plan.source_of.end())
      if (const auto found = by_id.find(source_id->second); found != by_id.end()) source = &records[found->second];
    const std::string compiler =
        source ? source->compiler.value_or(config::kDefaultExecutor)
               : sweep::synthesized_record(c, "", "").compiler.value_or(config::kDefaultExecutor);
    const std::string source_status = source ? source->status.value_or("") : std::string();
    if (source_id == plan.source_of.end()) {
      out.push_back(unpredicted_row(c, std::string(results::kStatusInvalid),
                                    "no one-rank run to predict from: its ranks or global batch are not whole numbers "
                                    "the ranks divide",
                                    compiler));
      ++not_predicted;
      continue;
    }
    if (!source || source_status != results::kStatusOk) {
      out.push_back(unpredicted_row(
          c, "not_predicted",
          source ? fmt::format("its one-rank run (config {}) ended '{}': {}", source_id->second, source_status,
                               source->message.value_or(""))
                 : fmt::format("its one-rank run (config {}) has not run (the sweep was interrupted)", source_id->second),
          compiler));
      ++not_predicted;
      continue;
    }
    const predict::ClusterInput* input = cluster.for_world_size(ranks_of(c));
    if (!input) {
      out.push_back(unpredicted_row(c, std::string(results::kStatusInvalid),
                                    fmt::format("--predict measured has no --comm document of {} ranks (tokbench comm "
                                                "--nproc-per-node {} measures one)",
                                                ranks_of(c), ranks_of(c)),
                                    compiler));
      ++not_predicted;
      continue;
    }
    results::RunRecord record;
    try {
      const predict::MeasuredRun run =
          predict::read_measured_run(*source, fmt::format("sweep config {}", source_id->second));
      record = predict::predict_record(run, *input, predict::target_from_run_options(c.options));
    } catch (const std::invalid_argument& e) {
      out.push_back(unpredicted_row(c, std::string(results::kStatusInvalid), e.what(), compiler));
      ++not_predicted;
      continue;
    }
    record.compiler = compiler + " predicted";
    record.sweep_config_id = predicted_id(c);
    record.sweep_options = results::Block(options_json(c));
    results::Block prediction = record.prediction.value_or(results::Block::object());
    prediction[predict::prediction_key::source][results::key::sweep_config_id] = source_id->second;
    const double predicted_ms = record.average_iter_time.value_or(0.0);
    std::string beside;
    if (measured && measured->status.value_or("") == results::kStatusOk && measured->average_iter_time.value()) {
      const double measured_ms = *measured->average_iter_time.value();
      const double error = (predicted_ms - measured_ms) / measured_ms;
      prediction[predict::prediction_key::measured_average_iter_time] = measured_ms;
      prediction[predict::prediction_key::error] = error;
      errors.push_back({error, c.describe()});
      beside = fmt::format(" (measured {:.1f} ms, {:+.1f}%)", measured_ms, 100 * error);
    }
    record.prediction = std::move(prediction);
    if (progress)
      std::fprintf(progress, "tokbench sweep: predicted %s: %.1f ms per iteration%s\n", c.describe().c_str(),
                   predicted_ms, beside.c_str());
    out.push_back(json::parse(results::to_json(record).dump()));
    ++predicted;
  }
  if (progress) {
    std::fprintf(progress, "tokbench sweep: %d row(s) predicted on %s, %d not (their rows say why)\n", predicted,
                 cluster.spec.c_str(), not_predicted);
    if (!errors.empty()) {
      double sum = 0;
      const Error* worst = &errors.front();
      for (const auto& e : errors) {
        sum += std::abs(e.error);
        if (std::abs(e.error) > std::abs(worst->error)) worst = &e;
      }
      std::fprintf(progress,
                   "tokbench sweep: predicted vs measured iteration time: mean absolute error %.1f%% over %zu row(s), "
                   "largest %+.1f%% (%s)\n",
                   100 * sum / static_cast<double>(errors.size()), errors.size(), 100 * worst->error,
                   worst->row.c_str());
    }
  }
  return out;
}

}  // namespace tokbench::sweep
