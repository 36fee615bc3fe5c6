// The bytes of data/litgpt_configs.json, compiled into the program at build time (CMake turns
// the file into catalog_data.cpp) so `tokbench` finds its catalog from any working directory.
#pragma once

#include <string_view>

namespace tokbench::model {

std::string_view litgpt_catalog_json();  // the whole JSON document, not NUL-terminated

}  // namespace tokbench::model
