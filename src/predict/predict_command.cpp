// `tokbench predict`'s work (predict_command.hpp): the measured runs --from names, the cluster,
// an earlier prediction's probes, one prediction per run, and the report in the chosen format.
#include "predict/predict_command.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "files/atomic_file.hpp"
#include "predict/cluster.hpp"
#include "predict/cluster_keys.hpp"
#include "predict/comm_measurements.hpp"
#include "predict/machine_probes.hpp"
#include "predict/measured_run.hpp"
#include "predict/prediction_keys.hpp"
#include "predict/prediction_notes.hpp"
#include "results/read_result.hpp"
#include "results/record_keys.hpp"
#include "results/record_status.hpp"
#include "results/result_store.hpp"
#include "results/tables.hpp"
#include "usage/usage_error.hpp"
#include "results/report_keys.hpp"

namespace tokbench::predict {
namespace {


// A store row reference: "STORE.sqlite:ID" (the sweep's id).
std::optional<std::pair<std::string, int64_t>> store_reference(const std::string& from) {
  const std::size_t colon = from.rfind(':');
  if (colon == std::string::npos || colon + 1 == from.size()) return std::nullopt;
  const std::string path = from.substr(0, colon), id = from.substr(colon + 1);
  if (id.find_first_not_of("0123456789") != std::string::npos || path.size() < 7 ||
      path.substr(path.size() - 7) != ".sqlite")
    return std::nullopt;
  return std::make_pair(path, std::stoll(id));
}

// The measured runs --from names: one record, every record of a sweep's JSON, or every run of a
// stored sweep. In a list, runs that did not finish are skipped (said on stderr); a lone record
// that did not finish is refused by read_measured_run.
std::vector<MeasuredRun> measured_runs(const std::string& from) {
  std::vector<std::pair<nlohmann::json, std::string>> records;
  bool from_list = true;  // a store's sweep or a sweep's JSON: skip what did not finish
  if (const auto ref = store_reference(from)) {
    const auto store = results::ResultStore::open_for_reading(ref->first);
    int64_t row = 0;
    store->for_each_run(ref->second, "", [&](nlohmann::json&& run) {
      const auto id = run.find(results::key::sweep_config_id);
      const std::string name = id != run.end() && id->is_string() ? id->get<std::string>() : std::to_string(row);
      records.emplace_back(std::move(run), fmt::format("{} config {}", from, name));
      ++row;
    });
    if (records.empty())
      throw std::invalid_argument(fmt::format("--from '{}': the store has no sweep {} (tokbench history lists them)",
                                              from, ref->second));
  } else {
    // The reader every command shares (results/read_result.hpp): bounded, a directory named as
    // one, each listed record checked as a lone one is.
    nlohmann::json doc;
    try {
      doc = results::parse_record_document(results::read_record_file(from));
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(fmt::format("--from '{}' is not valid: {}; valid: a run's JSON (tokbench run "
                                              "--json-path), a sweep's JSON, or STORE.sqlite:SWEEP_ID",
                                              usage::printable(from), e.what()));
    }
    from_list = doc.is_array() || (doc.is_object() && doc.contains(results::report_key::runs) && !doc.contains(results::key::schema_version));
    // One object that is no list: a record, with a record's checks (an object no run wrote is
    // named as such, not read as a run that did not finish).
    if (!from_list) doc = results::read_run_result(from);
    records = records_of_document(doc, from);
    // A list holds records: anything else (a number, a string) is no sweep's JSON, refused in one
    // line rather than skipped once per element.
    if (from_list)
      for (const auto& [record, source] : records) {
        try {
          results::check_run_record(record);
        } catch (const std::invalid_argument& e) {
          throw std::invalid_argument(fmt::format("--from '{}' is not valid: at{}, {}; valid: a run's JSON, a sweep's "
                                                  "JSON (its runs' records), or STORE.sqlite:SWEEP_ID",
                                                  usage::printable(from), usage::printable(source.substr(from.size())),
                                                  e.what()));
        }
      }
  }
  std::vector<MeasuredRun> runs;
  for (auto& [record, source] : records) {
    const std::string status = record.is_object() ? record.value(results::key::status, std::string()) : std::string();
    if (from_list && status != results::kStatusOk) {
      std::cerr << fmt::format("tokbench predict: skipping {} (status '{}')\n", source, status);
      continue;
    }
    runs.push_back(read_measured_run(record, source));
  }
  if (runs.empty()) throw std::invalid_argument(fmt::format("--from '{}' holds no finished run (status ok) to predict from", from));
  return runs;
}

ClusterInput cluster_input(const PredictCommandOptions& o) {
  if (o.cluster == cluster_key::measured_cluster) {
    if (o.comm.empty())
      throw std::invalid_argument("--cluster measured reads collective times from --comm COMM.json (written by tokbench comm)");
    // One document: the target's world. Several (hybrid sharding's group sizes beside it): the
    // one of the target's world size leads, so the ranks must be named.
    std::vector<CommMeasurements> documents;
    for (const auto& path : o.comm) documents.push_back(read_comm_document(path));
    if (documents.size() == 1) return measured_cluster(std::move(documents.front()));
    if (!o.target.nproc_per_node)
      throw std::invalid_argument("with several --comm documents, name the ranks with --nproc-per-node (the document of "
                                  "that world size leads; the others time hybrid sharding's smaller groups)");
    const int64_t world = *o.target.nproc_per_node * o.target.nnodes;
    const auto lead = std::find_if(documents.begin(), documents.end(),
                                   [&](const CommMeasurements& d) { return d.world_size == world; });
    if (lead == documents.end())
      throw std::invalid_argument(fmt::format("--comm: no document was measured over {} ranks, the predicted world; "
                                              "valid: add tokbench comm --nproc-per-node {}'s",
                                              world, world));
    CommMeasurements leading = std::move(*lead);
    documents.erase(lead);
    return measured_cluster(std::move(leading), std::move(documents));
  }
  if (!o.comm.empty())
    throw std::invalid_argument(fmt::format("--comm applies to --cluster measured only (cluster is '{}')", o.cluster));
  return ClusterInput{load_cluster(o.cluster), std::nullopt, {}};
}

// --probes-from: an earlier prediction's copy rate and AdamW costs (machine_probes.hpp).
std::optional<MachineProbes> machine_probes(const std::string& path) {
  if (path.empty()) return std::nullopt;
  nlohmann::json doc;
  try {
    doc = results::parse_record_document(results::read_record_file(path));
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(fmt::format("--probes-from '{}' is not valid: {}; valid: the JSON of an earlier "
                                            "tokbench predict (--format json)",
                                            usage::printable(path), e.what()));
  }
  return machine_probes_from_prediction(doc, usage::printable(path));
}

}  // namespace

void run_predict_command(const PredictCommandOptions& o, const MeasureOptimizerCost& measure_optimizer_cost) {
  // Everything is checked before anything is written: the options alone, then the files.
  check_predict_options(o);
  const ComputeLevel compute_level = compute_level_from_string(o.compute_level);
  const results::ReporterPlugin& format = results::format_from_string(o.format);
  if (!o.output.empty()) {
    const std::string why = files::why_not_writable(o.output);
    if (!why.empty())
      throw std::invalid_argument(fmt::format("--output '{}' cannot be written: {}; valid: a file path in an existing, "
                                              "writable folder", usage::printable(o.output), why));
  }
  ClusterInput cluster = cluster_input(o);
  cluster.compute_level = compute_level;
  const std::optional<MachineProbes> probes = machine_probes(o.probes_from);
  std::vector<nlohmann::json> predictions;
  for (const auto& run : measured_runs(o.from)) {
    ClusterInput input = cluster;
    if (probes) {
      // The earlier prediction's probes, for the ranks per node they were measured at; another
      // placement is refused rather than probed here, so the figures never mix two machines' states.
      input.memory_rate = probes->memory_rate;
      if (run.device_is_cpu() && input.cluster.device == "cpu") input.optimizer_cost = probes->optimizer_cost;
      input.measure_memory = [&o, &probes](int64_t ranks) -> MemoryRate {
        throw std::invalid_argument(fmt::format(
            "--probes-from '{}': its copy rate was measured with {} rank(s) per node, the prediction puts {}; valid: "
            "a prediction of {} ranks per node, or leave --probes-from out to probe this machine",
            usage::printable(o.probes_from), probes->memory_rate.ranks, ranks, ranks));
      };
      predictions.push_back(nlohmann::json::parse(predict(run, input, o.target).dump()));
      continue;
    }
    // The optimizer's per-tensor and per-element costs, probed here at the predicted rank's threads.
    input.measure_memory = [](int64_t ranks) { return measure_memory_rate(ranks); };
    if (run.device_is_cpu() && input.cluster.device == "cpu") {
      const auto given_threads = o.target.taken(&config::DeviceSection::num_threads);
      int64_t threads = given_threads ? *given_threads : run.num_threads;
      if (threads <= 0) threads = std::max<int64_t>(1, std::thread::hardware_concurrency());
      input.optimizer_cost = measure_optimizer_cost(threads);
    }
    predictions.push_back(nlohmann::json::parse(predict(run, input, o.target).dump()));
  }
  // The report's context: the records it is from and the cluster's name, in the prediction's words.
  const nlohmann::json context{{"command", "tokbench predict"},
                               {prediction_key::from, o.from},
                               {prediction_key::cluster, cluster.cluster.name},
                               {results::report_key::runs, predictions.size()}};
  // Under the print format's tables: each prediction's interval and time account, in words.
  const std::string notes = format.name == "print" ? prediction_notes(predictions) : std::string();
  if (o.output.empty() || format.file != results::FileUse::never) {
    results::write_report(format, context, predictions, {}, std::cout, o.output);
    std::cout << notes;
  } else {
    std::ostringstream text;
    results::write_report(format, context, predictions, {}, text, {});
    files::write_file_atomically(o.output, text.str() + notes);
  }
}


}  // namespace tokbench::predict
