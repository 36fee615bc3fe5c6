// `tokbench models`'s work, below the command line: the compiled-in litgpt catalog, filtered, as
// a fixed-width table ('#' header lines, one row per model) or a JSON array. Parameter counts are
// litgpt's (untied lm_head), from the closed-form counter (counting.hpp), which a test holds equal
// to litgpt. cli registers the command (cli/cmd_models.cpp).
#pragma once

#include <ostream>
#include <string>

namespace tokbench::model {

struct ModelsOptions {
  std::string filter;  // case-insensitive substring of the litgpt name or HF id
  bool json = false;
};

void write_models(const ModelsOptions& options, std::ostream& out);

}  // namespace tokbench::model
