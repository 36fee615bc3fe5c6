// The compiled-in litgpt catalog's own keys (model/catalog_data.hpp's JSON, written by the
// script that generates it; read by catalog.cpp, and by model_config_file.cpp, which accepts a
// catalog entry as a --model-config file): each entry is a litgpt config (litgpt_keys.hpp) plus
// these. Also `tokbench models --json`'s one key that is not a config field. Constants only.
#pragma once

namespace tokbench::model::catalog_key {

inline constexpr char configs[] = "configs";
inline constexpr char source[] = "source";            // where litgpt's entry came from
inline constexpr char param_count[] = "param_count";  // litgpt's count, checked against tokbench's

}  // namespace tokbench::model::catalog_key

// `tokbench models --json` (models_listing.cpp): a catalog entry's config fields by their
// litgpt names, and its parameter count.
namespace tokbench::model::listing_key {

inline constexpr char params[] = "params";

}  // namespace tokbench::model::listing_key
