// Reading a run's JSON result back (compare, the sweep's folders, the result store's rows): a
// document is taken only when it is one, and refused in one line naming the file and what it is
// instead: not readable, not JSON (truncated or damaged), nested or numbered beyond any result,
// JSON of another program, a result of a newer schema, or a key holding a type no result has.
#pragma once

#include <nlohmann/json.hpp>

#include <filesystem>
#include <string_view>

namespace tokbench::results {

// Far deeper than any result nests (a few levels: the iterations' and ranks' records), and
// shallow enough for the recursive code that reads a document (dump, compare, copies).
inline constexpr int kMaxRecordNesting = 64;

// The result document at `path`; throws std::invalid_argument (a usage error: exit 2) with one
// line when the file is not a tokbench run result this tokbench can read. A sweep's row for a
// configuration that never produced a result (`invalid`, `error`, `timeout`: status, message
// and the configuration's columns, no schema_version) is read as the sweep wrote it.
nlohmann::json read_run_result(const std::filesystem::path& path);

// `text` as a run record, the checks the result store's rows share with a file: JSON within the
// nesting limit and a double's range, an object, and each key tokbench's readers use (status,
// message, iterations and their fields, environment, config, ranks, the sweep's keys) of the type
// they use it as. Throws std::invalid_argument with the reason alone ("its key 'status' holds a
// number; ..."): the caller names where the text came from.
nlohmann::json parse_run_record(std::string_view text);

}  // namespace tokbench::results
