// The litgpt config catalog (data/litgpt_configs.json, compiled into the program) and the
// lookup by litgpt name, Hugging Face id ("org/name") or bare Hugging Face name, in litgpt's
// order. Unknown names are usage errors that list the closest known names.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "model/config.hpp"

namespace tokbench::model {

struct CatalogEntry {
  Config config;        // finalized
  int64_t param_count;  // litgpt's num_parameters (untied), from the reference catalog
};

// Raised for a name that is not in the catalog; what() is one line that names the closest
// known names, ready to print to the user.
class UnknownModelError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

const std::vector<CatalogEntry>& catalog();                 // all 210, in catalog order
const CatalogEntry* find_entry(std::string_view name);       // nullptr when unknown
Config config_by_name(std::string_view name);                // throws UnknownModelError
std::vector<std::string> closest_names(std::string_view name, std::size_t max_count = 5);

// Benchmark overrides, applied before finalize() as litgpt's from_name(**overrides) does.
struct ModelOverrides {
  std::optional<int64_t> n_layer;
  std::optional<int64_t> seq_len;  // replaces block_size
};
Config with_overrides(Config config, const ModelOverrides& overrides);

// A custom model from a TOML or JSON file of litgpt fields, derived with litgpt's rules.
// Throws std::invalid_argument listing every invalid field by name.
Config load_model_config(const std::filesystem::path& path);

}  // namespace tokbench::model
