// Reading an earlier prediction's probes back (saved_probes.hpp).
#include "predict/saved_probes.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <sstream>
#include <stdexcept>

namespace tokbench::predict {

SavedProbes parse_saved_probes(std::string_view text, const std::string& source) {
  using nlohmann::json;
  auto refuse = [&](const std::string& what) {
    throw std::invalid_argument(fmt::format("--probes-from '{}': {}; valid: a JSON that tokbench predict wrote", source,
                                            what));
  };
  json doc;
  try {
    doc = json::parse(text);
  } catch (const json::exception&) {
    refuse("not JSON");
  }
  if (doc.is_object() && doc.contains("runs") && doc["runs"].is_array() && !doc["runs"].empty()) doc = doc["runs"][0];
  const json prediction = doc.is_object() ? doc.value("prediction", json()) : json();
  if (!prediction.is_object()) refuse("no \"prediction\" object (not a prediction)");
  auto number = [](const json& o, const char* key) {
    return o.is_object() && o.contains(key) && o[key].is_number() ? o[key].get<double>() : 0.0;
  };
  SavedProbes probes;
  const json copies = prediction.value("step_copies", json());
  const json rate = copies.is_object() ? copies.value("memory_rate", json()) : json();
  if (number(rate, "alone_GBps") > 0 && number(rate, "together_GBps") > 0 && rate.value("ranks", json()).is_number_integer()) {
    MemoryRate r;
    r.alone_bytes_per_s = number(rate, "alone_GBps") * 1e9;
    r.together_bytes_per_s = number(rate, "together_GBps") * 1e9;
    r.ranks = rate["ranks"].get<int64_t>();
    r.pair_slowdown = number(rate, "pair_slowdown");
    r.source = fmt::format("given (--probes-from {})", source);
    probes.memory_rate = r;
  }
  const json optimizer = prediction.value("optimizer", json());
  if (number(optimizer, "per_tensor_us") > 0 && number(optimizer, "per_element_ns") > 0)
    probes.optimizer_cost = OptimizerCostRates{number(optimizer, "per_tensor_us") * 1e-6,
                                               number(optimizer, "per_element_ns") * 1e-9,
                                               fmt::format("given (--probes-from {}): {}", source,
                                                           optimizer.value("costs_from", std::string("?")))};
  if (!probes.memory_rate && !probes.optimizer_cost)
    refuse("it records neither a copy rate (prediction.step_copies.memory_rate) nor AdamW costs (prediction.optimizer)");
  return probes;
}

SavedProbes read_saved_probes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::invalid_argument(fmt::format("--probes-from '{}': cannot read it", path));
  std::ostringstream text;
  text << in.rdbuf();
  return parse_saved_probes(text.str(), path);
}

}  // namespace tokbench::predict
