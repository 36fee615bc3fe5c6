// Reading an earlier prediction's probes back (machine_probes.hpp).
#include "predict/machine_probes.hpp"

#include <fmt/format.h>

#include <cmath>
#include <optional>
#include <stdexcept>

#include "predict/prediction_keys.hpp"
#include "results/record_keys.hpp"
#include "results/report_keys.hpp"

namespace tokbench::predict {

namespace pk = prediction_key;

namespace {

[[noreturn]] void refuse_probes(const std::string& source, const std::string& why) {
  throw std::invalid_argument(fmt::format("--probes-from '{}': {}; valid: the JSON of an earlier tokbench predict on "
                                          "a CPU cluster (--format json), whose prediction timed the step's copies",
                                          source, why));
}

const nlohmann::json* first_predicted_record(const nlohmann::json& doc) {
  if (doc.is_object() && doc.contains(results::key::prediction)) return &doc;
  const nlohmann::json* runs = doc.is_object() && doc.contains(results::report_key::runs) ? &doc[results::report_key::runs] : doc.is_array() ? &doc : nullptr;
  if (!runs || !runs->is_array()) return nullptr;
  for (const auto& run : *runs)
    if (run.is_object() && run.contains(results::key::prediction) && run[results::key::prediction].is_object())
      return &run;
  return nullptr;
}

double positive_number(const nlohmann::json& object, const char* key) {
  const auto it = object.find(key);
  if (it == object.end() || !it->is_number()) return 0;
  const double v = it->get<double>();
  return std::isfinite(v) && v > 0 ? v : 0;
}

// A recorded cost: a finite number >= 0 (the AdamW probe clamps a cost its pair solved below 0
// to 0), else nothing.
std::optional<double> recorded_cost(const nlohmann::json& object, const char* key) {
  const auto it = object.find(key);
  if (it == object.end() || !it->is_number()) return std::nullopt;
  const double v = it->get<double>();
  return std::isfinite(v) && v >= 0 ? std::optional<double>(v) : std::nullopt;
}

}  // namespace

MachineProbes machine_probes_from_prediction(const nlohmann::json& doc, const std::string& source) {
  const nlohmann::json* run = first_predicted_record(doc);
  if (!run) refuse_probes(source, "it holds no prediction (a record with a 'prediction' object)");
  const nlohmann::json& p = (*run)[results::key::prediction];
  const auto copies = p.find(pk::step_copies);
  if (copies == p.end() || !copies->is_object() || !copies->contains(pk::memory_rate) ||
      !(*copies)[pk::memory_rate].is_object())
    refuse_probes(source, "its prediction has no step_copies.memory_rate (a GPU cluster's, or a sweep's, which times no copies)");
  const nlohmann::json& rate = (*copies)[pk::memory_rate];
  MachineProbes probes;
  MemoryRate& m = probes.memory_rate;
  m.alone_bytes_per_s = positive_number(rate, pk::alone_GBps) * 1e9;
  m.together_bytes_per_s = positive_number(rate, pk::together_GBps) * 1e9;
  m.pair_slowdown = positive_number(rate, pk::pair_slowdown);
  const auto ranks = rate.find(pk::ranks);
  m.ranks = ranks != rate.end() && ranks->is_number_integer() ? ranks->get<int64_t>() : 0;
  if (!(m.alone_bytes_per_s > 0) || !(m.together_bytes_per_s > 0) || m.ranks < 1)
    refuse_probes(source, "its step_copies.memory_rate needs alone_GBps and together_GBps (> 0) and ranks (>= 1)");
  m.source = fmt::format("reused from {}", source);
  const auto optimizer = p.find(pk::optimizer);
  if (optimizer != p.end() && optimizer->is_object()) {
    const std::optional<double> per_tensor_us = recorded_cost(*optimizer, pk::per_tensor_us),
                                per_element_ns = recorded_cost(*optimizer, pk::per_element_ns);
    if (per_tensor_us && per_element_ns) {
      const auto from = optimizer->find(pk::costs_from);
      probes.optimizer_cost = OptimizerCostRates{
          *per_tensor_us * 1e-6, *per_element_ns * 1e-9,
          fmt::format("reused from {} ({})", source, from != optimizer->end() && from->is_string() ? from->get<std::string>() : "its probe")};
    }
  }
  return probes;
}

}  // namespace tokbench::predict
