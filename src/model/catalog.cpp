// The compiled-in litgpt catalog: parsed once on first use, every entry finalized and checked
// for duplicate names. Lookup follows litgpt's Config.from_name order (exact litgpt name, then
// bare Hugging Face name, then "org/name"); unknown names get a one-line list of close names.
// Overrides follow from_name(**overrides): applied before finalize(), derived fields recomputed.
#include "model/catalog.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <map>
#include <stdexcept>

#include "model/catalog_data.hpp"
#include "model/catalog_keys.hpp"
#include "model/config_json.hpp"
#include "model/litgpt_keys.hpp"
#include "usage/likely_meant.hpp"

namespace tokbench::model {
namespace {

struct Catalog {
  std::vector<CatalogEntry> entries;
  std::map<std::string, std::size_t, std::less<>> by_name;     // litgpt name
  std::map<std::string, std::size_t, std::less<>> by_hf_name;  // bare HF name (after '/')
  std::map<std::string, std::size_t, std::less<>> by_hf_id;    // "org/name"
};

std::string_view bare_hf_name(std::string_view hf) {
  auto slash = hf.rfind('/');
  return slash == std::string_view::npos ? hf : hf.substr(slash + 1);
}

Catalog load_catalog() {
  const auto document = nlohmann::json::parse(litgpt_catalog_json());
  Catalog catalog;
  for (const auto& item : document.at(catalog_key::configs)) {
    Config config;
    std::vector<std::string> problems;
    config_from_json(item, config, problems, {catalog_key::source, catalog_key::param_count});
    if (!problems.empty() || !item.contains(catalog_key::param_count))
      throw std::logic_error(fmt::format("compiled-in catalog entry {} is broken: {}", item.value(litgpt_key::name, "?"),
                                         problems.empty() ? "no param_count" : problems.front()));
    config.finalize();
    const std::size_t index = catalog.entries.size();
    if (!catalog.by_name.emplace(config.name, index).second)
      throw std::logic_error("duplicate model name in the compiled-in catalog: " + config.name);
    // HF ids may repeat across litgpt names; the first (catalog order) wins, as in litgpt.
    if (!config.hf.empty()) {
      catalog.by_hf_name.emplace(std::string(bare_hf_name(config.hf)), index);
      catalog.by_hf_id.emplace(config.hf, index);
    }
    catalog.entries.push_back({std::move(config), item.at(catalog_key::param_count).get<int64_t>()});
  }
  return catalog;
}

const Catalog& the_catalog() {
  static const Catalog catalog = load_catalog();
  return catalog;
}

std::string lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// Extends a per-layer 0/1 list to `n_layer` entries by repeating its pattern. The pattern is
// the shortest period p that the list follows throughout and that repeats at least twice
// (Gemma-2 "10", Gemma-3 "111110", uniform "1"); without one the extension is ambiguous.
void resize_layer_list(std::vector<int>& list, const char* field, int64_t n_layer, const std::string& model) {
  const auto wanted = static_cast<std::size_t>(n_layer);
  if (list.empty() || list.size() == wanted) return;
  if (wanted < list.size()) {
    list.resize(wanted);  // litgpt truncates
    return;
  }
  for (std::size_t period = 1; 2 * period <= list.size(); ++period) {
    bool follows = true;
    for (std::size_t i = period; i < list.size() && follows; ++i) follows = list[i] == list[i % period];
    if (!follows) continue;
    const std::size_t known = list.size();
    for (std::size_t i = known; i < wanted; ++i) list.push_back(list[i % period]);
    return;
  }
  throw std::invalid_argument(fmt::format(
      "n_layer {} exceeds the {} per-layer entries of {} in {} and the list has no repeating pattern "
      "to extend; valid: 1..{}",
      n_layer, list.size(), field, model, list.size()));
}

}  // namespace

const std::vector<CatalogEntry>& catalog() { return the_catalog().entries; }

const CatalogEntry* find_entry(std::string_view name) {
  const Catalog& c = the_catalog();
  for (const auto* index : {&c.by_name, &c.by_hf_name, &c.by_hf_id}) {
    if (auto it = index->find(name); it != index->end()) return &c.entries[it->second];
  }
  return nullptr;
}

std::vector<std::string> closest_names(std::string_view name, std::size_t max_count) {
  const std::string query = lower(name);
  struct Candidate {
    bool substring;        // a substring hit ranks before any edit-distance match
    std::size_t distance;  // to the litgpt name or the HF id, whichever is closer
    std::size_t index;     // catalog order breaks ties
  };
  std::vector<Candidate> candidates;
  const auto& entries = catalog();
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const std::string litgpt_name = lower(entries[i].config.name);
    const std::string hf = lower(entries[i].config.hf);
    const bool substring = !query.empty() && (litgpt_name.find(query) != std::string::npos ||
                                              hf.find(query) != std::string::npos);
    const std::size_t distance = std::min({usage::edit_distance(query, litgpt_name), usage::edit_distance(query, hf),
                                           usage::edit_distance(query, lower(bare_hf_name(hf)))});
    candidates.push_back({substring, distance, i});
  }
  std::sort(candidates.begin(), candidates.end(), [](const Candidate& a, const Candidate& b) {
    if (a.substring != b.substring) return a.substring;
    if (a.distance != b.distance) return a.distance < b.distance;
    return a.index < b.index;
  });
  std::vector<std::string> names;
  for (std::size_t i = 0; i < candidates.size() && names.size() < max_count; ++i)
    names.push_back(entries[candidates[i].index].config.name);
  return names;
}

Config config_by_name(std::string_view name) {
  if (const CatalogEntry* entry = find_entry(name)) return entry->config;
  const auto close = closest_names(name);
  std::string list;
  for (const auto& candidate : close) list += (list.empty() ? "" : ", ") + candidate;
  throw UnknownModelError(fmt::format("unknown model '{}'; closest names: {} (see `tokbench models`)", name, list));
}

Config with_overrides(Config config, const ModelOverrides& overrides) {
  if (overrides.n_layer) {
    if (*overrides.n_layer <= 0)
      throw std::invalid_argument(fmt::format("n_layer {} must be a positive integer", *overrides.n_layer));
    config.n_layer = *overrides.n_layer;
    resize_layer_list(config.sliding_window_indices, litgpt_key::sliding_window_indices, config.n_layer, config.name);
    resize_layer_list(config.rope_indices, litgpt_key::rope_indices, config.n_layer, config.name);
  }
  if (overrides.seq_len) {
    if (*overrides.seq_len <= 0)
      throw std::invalid_argument(fmt::format("seq_len {} must be a positive integer", *overrides.seq_len));
    config.block_size = *overrides.seq_len;
  }
  config.finalize();  // re-derive (rope_n_elem, per-layer lists) exactly once more
  return config;
}

}  // namespace tokbench::model
