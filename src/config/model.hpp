// Model section: which litgpt model a run trains and its shape. Read by run/resolve.cpp, which
// looks the model up in the model layer's catalog (model/config_catalog.hpp) and applies the
// overrides; the sweep and predict read the same names.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "config/field.hpp"

namespace tokbench::config {

struct ModelSection {
  std::string model_name = "pythia-14m";  // small, so the default run fits in minutes on a CPU
  std::string model_config;               // TOML/JSON file of litgpt fields; wins over model_name
  std::optional<int64_t> n_layers;
  std::optional<int64_t> seq_len;         // unset: the model's block_size (as the reference)
};

const std::vector<Field>& model_fields();

}  // namespace tokbench::config
