// The model section's option table (model.hpp).
#include "config/model.hpp"

#include <fmt/format.h>

#include "config/numbers.hpp"
#include "config/row_record_keys.hpp"
#include "config/run_options.hpp"

namespace tokbench::config {

const std::vector<Field>& model_fields() {
  static const std::vector<Field> fields{
      {.names = "--model-name,--model_name",
       .member = &ModelSection::model_name,
       .help = "litgpt model name or Hugging Face id (see `tokbench models`)",
       .group = "Model"},
      {.names = "--model-config,--model_config",
       .member = &ModelSection::model_config,
       .help = "TOML/JSON file of litgpt config fields; used instead of --model-name",
       .group = "Model",
       .record = {config_key::model_config, 1},
       .shapes = {.record_key = config_key::model_config, .in_config = true, .place = 11}},
      {.names = "--n-layers,--n_layers",
       .member = &ModelSection::n_layers,
       .help = "override the model's n_layer",
       .group = "Model",
       .valid = fmt::format("a whole number 1..{}", limits::kMaxLayers),
       // Checked before the config is built: its per-layer lists have n_layer entries.
       .bounds = {.positive = true,
                  .max = limits::kMaxLayers,
                  .refusal = fmt::format("is not valid; valid: 1..{} (the deepest litgpt model has 126)",
                                         limits::kMaxLayers)},
       .record = {"n_layers", 10},
       .shapes = {.label = "layers", .record_key = record_key::n_layer, .place = 9}},
      {.names = "--seq-len,--seq_len,--block-size,--block_size",
       .member = &ModelSection::seq_len,
       .help = "tokens per sequence T (default: the model's block_size)",
       .group = "Model",
       .valid = "a positive whole number",
       .bounds = {.positive = true},
       .shapes = {.label = "T", .record_key = record_key::seq_len, .place = 2}},
  };
  return fields;
}

}  // namespace tokbench::config
