// `tokbench models`'s work (models_listing.hpp).
#include "model/models_listing.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <string>
#include <vector>

#include "model/catalog.hpp"
#include "model/catalog_keys.hpp"
#include "model/counting.hpp"
#include "model/litgpt_keys.hpp"

namespace tokbench::model {
namespace {

std::string lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

}  // namespace

void write_models(const ModelsOptions& options, std::ostream& out) {
  const std::string needle = lower(options.filter);
  std::vector<const CatalogEntry*> rows;
  for (const auto& entry : catalog()) {
    if (needle.empty() || lower(entry.config.name).find(needle) != std::string::npos ||
        lower(entry.config.hf).find(needle) != std::string::npos)
      rows.push_back(&entry);
  }

  if (options.json) {
    nlohmann::json list = nlohmann::json::array();
    for (const auto* entry : rows) {
      const auto& c = entry->config;
      namespace lk = litgpt_key;
      list.push_back({{lk::name, c.name},
                      {lk::hf, c.hf},
                      {listing_key::params, count_params(c).total},
                      {lk::n_layer, c.n_layer},
                      {lk::n_embd, c.n_embd},
                      {lk::n_head, c.n_head},
                      {lk::n_query_groups, c.groups()},
                      {lk::mlp_class_name, c.mlp_class_name},
                      {lk::norm_class_name, c.norm_class_name}});
    }
    out << list.dump(1) << "\n";
    return;
  }

  std::size_t name_width = 4;
  for (const auto* entry : rows) name_width = std::max(name_width, entry->config.name.size());
  out << fmt::format("# tokbench models: {} of {} litgpt configs{}\n", rows.size(), catalog().size(),
                     options.filter.empty() ? "" : fmt::format(" matching '{}'", options.filter));
  out << "# params: litgpt's count (lm_head not tied to the embedding); groups: n_query_groups\n";
  const auto line = [&](auto&&... columns) {
    return fmt::format("{:<{}}  {:>15}  {:>6}  {:>6}  {:>6}  {:>6}  {:<10}  {:<9}  {}\n", columns...);
  };
  // The headings name the litgpt field a column shows, where it shows one as it is.
  out << "# " << line(litgpt_key::name, name_width - 2, listing_key::params, "layers", litgpt_key::n_embd,
                      litgpt_key::n_head, "groups", "mlp", "norm", litgpt_key::hf);
  for (const auto* entry : rows) {
    const auto& c = entry->config;
    out << line(c.name, name_width, count_params(c).total, c.n_layer, c.n_embd, c.n_head, c.groups(), c.mlp_class_name,
                c.norm_class_name, c.hf);
  }
}

}  // namespace tokbench::model
