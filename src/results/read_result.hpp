// Reading a run's JSON result back (compare, the sweep's folders): a file is taken only when it
// is one, and refused in one line naming the file and what it is instead: not readable, not
// JSON (truncated or damaged), JSON of another program, or a result of a newer schema.
#pragma once

#include <nlohmann/json.hpp>

#include <filesystem>

namespace tokbench::results {

// The result document at `path`; throws std::invalid_argument (a usage error: exit 2) with one
// line when the file is not a tokbench run result this tokbench can read.
nlohmann::json read_run_result(const std::filesystem::path& path);

}  // namespace tokbench::results
