// Reading and writing Config as JSON with litgpt's field names: one field table shared by the
// compiled-in catalog and by --model-config files (TOML is converted to JSON first). Reading
// collects a message for every bad field instead of stopping at the first.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "model/config.hpp"

namespace tokbench::model {

// Fills `config` from the object `fields` (not finalized). Appends one message per problem to
// `problems`: unknown names (listing the valid ones), wrong types, values out of their choices,
// and litgpt features tokbench does not implement (latent_attention, n_shared_expert, expert
// groups, first_k_dense_replace, YaRN rope_adjustments, ...). Keys in `ignored` are skipped.
void config_from_json(const nlohmann::json& fields, Config& config, std::vector<std::string>& problems,
                      const std::vector<std::string>& ignored = {});

// Every field name config_from_json accepts, in litgpt declaration order.
std::vector<std::string> config_field_names();

// The config's fields (finalized or not) as a JSON object with litgpt names; unset optionals
// are null.
nlohmann::json config_to_json(const Config& config);

}  // namespace tokbench::model
