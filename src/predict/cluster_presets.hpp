// The compiled-in cluster presets: data/clusters/*.toml, embedded at configure time so an
// installed binary needs no data directory (cluster_presets_data.cpp is generated).
#pragma once

#include <string_view>
#include <utility>
#include <vector>

namespace tokbench::predict {

// (name, TOML text) of every preset, sorted by name.
const std::vector<std::pair<std::string_view, std::string_view>>& cluster_preset_texts();

}  // namespace tokbench::predict
