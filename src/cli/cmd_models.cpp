// `tokbench models [--filter TEXT] [--json]`: the compiled-in litgpt catalog as a fixed-width
// table ('#' header lines, one row per model) or a JSON array. Parameter counts are litgpt's
// (untied lm_head), computed by the closed-form counter, which a test holds equal to litgpt.
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <iostream>
#include <memory>
#include <string>

#include "cli/command.hpp"
#include "model/catalog.hpp"
#include "model/counting.hpp"

namespace tokbench::cli {
namespace {

struct ModelsOptions {
  std::string filter;  // case-insensitive substring of the litgpt name or HF id
  bool json = false;
};

std::string lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

int run_models(const ModelsOptions& options) {
  const std::string needle = lower(options.filter);
  std::vector<const model::CatalogEntry*> rows;
  for (const auto& entry : model::catalog()) {
    if (needle.empty() || lower(entry.config.name).find(needle) != std::string::npos ||
        lower(entry.config.hf).find(needle) != std::string::npos)
      rows.push_back(&entry);
  }

  if (options.json) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto* entry : rows) {
      const auto& c = entry->config;
      out.push_back({{"name", c.name},
                     {"hf", c.hf},
                     {"params", model::count_params(c).total},
                     {"n_layer", c.n_layer},
                     {"n_embd", c.n_embd},
                     {"n_head", c.n_head},
                     {"n_query_groups", c.groups()},
                     {"mlp_class_name", c.mlp_class_name},
                     {"norm_class_name", c.norm_class_name}});
    }
    std::cout << out.dump(1) << "\n";
    return kExitOk;
  }

  std::size_t name_width = 4;
  for (const auto* entry : rows) name_width = std::max(name_width, entry->config.name.size());
  std::cout << fmt::format("# tokbench models: {} of {} litgpt configs{}\n", rows.size(), model::catalog().size(),
                           options.filter.empty() ? "" : fmt::format(" matching '{}'", options.filter));
  std::cout << "# params: litgpt's count (lm_head not tied to the embedding); groups: n_query_groups\n";
  const auto line = [&](auto&&... columns) {
    return fmt::format("{:<{}}  {:>15}  {:>6}  {:>6}  {:>6}  {:>6}  {:<10}  {:<9}  {}\n", columns...);
  };
  std::cout << "# " << line("name", name_width - 2, "params", "layers", "n_embd", "n_head", "groups", "mlp",
                             "norm", "hf");
  for (const auto* entry : rows) {
    const auto& c = entry->config;
    std::cout << line(c.name, name_width, model::count_params(c).total, c.n_layer, c.n_embd, c.n_head, c.groups(),
                      c.mlp_class_name, c.norm_class_name, c.hf);
  }
  return kExitOk;
}

const RegisterCommand kModels{
    {"models", "List the litgpt model configs tokbench can build",
     [](CLI::App& sub) -> std::function<int()> {
       auto options = std::make_shared<ModelsOptions>();
       sub.add_option("--filter", options->filter,
                      "Only models whose name or Hugging Face id contains TEXT (case-insensitive)");
       sub.add_flag("--json", options->json, "Print a JSON array of objects instead of a table");
       return [options] { return run_models(*options); };
     }}};

}  // namespace
}  // namespace tokbench::cli
