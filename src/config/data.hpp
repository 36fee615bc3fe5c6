// Data section: where the tokens come from. Read by run/resolve.cpp into the train layer's
// token data (train/token_data.hpp), and by the Python step from the record's `config` block.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "config/field.hpp"

namespace tokbench::config {

struct DataSection {
  std::string data = "random";
  std::string data_dtype = "uint16";
  // The tokens' seed (random ids, a file's random windows) and --dynamic's lengths'. Unset: --seed.
  std::optional<uint64_t> data_seed;
};

const std::vector<Field>& data_fields();

}  // namespace tokbench::config
