// Reading a run's JSON result back (explain, compare, predict, the sweep's folders, the result
// store's rows): a document is taken only when it is one, and refused in one line naming the
// file and what it is instead: a directory or no regular file, far larger than any record (before
// it is read), not readable, not JSON (truncated or damaged), nested or numbered beyond any
// result, JSON of another program, a result of a newer schema, a key holding a type no result
// has, or a value no run produces (a negative or non-finite time, a time account whose
// categories do not add up to its iteration). A key's type is RunRecord's (run_record.hpp): every
// record read here reads as one, and read_result hands the typed record to the readers that
// interpret its figures.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

#include "results/run_record.hpp"

namespace tokbench::results {

// Far deeper than any result nests (a few levels: the iterations' and ranks' records), and
// shallow enough for the recursive code that reads a document (dump, compare, copies).
inline constexpr int kMaxRecordNesting = 64;

// The largest file read as a record or a document of records: a record of the most iterations a
// run takes (1,000,000, each ~200 bytes as written) is about 200 MB. A larger file is refused
// from its size, before any of it is read.
inline constexpr std::uintmax_t kMaxRecordFileBytes = std::uintmax_t{512} << 20;

// The text of the file at `path`, read in one buffer of its size; throws std::invalid_argument
// with the reason alone ("it is a directory", "it is 2.0 GB, far larger than ...") when it is no
// regular file, larger than kMaxRecordFileBytes, or cannot be read. The caller names the file.
std::string read_record_file(const std::filesystem::path& path);

// JSON text within the nesting limit and a double's range (an array or an object: a document
// of records); std::invalid_argument with the reason alone otherwise.
nlohmann::json parse_record_document(std::string_view text);

// The checks read_result makes of an object already parsed (a record inside a document of
// records): a result's schema_version, status and model_name (or a sweep's row of a run that
// produced none), each key of the type readers use it as, and its times finite and
// non-negative. Returns the record typed (record_from_json: keys the table does not know kept
// in `extra`).
RunRecord check_run_record(const nlohmann::json& record);

// A result read back two ways: its JSON as the file holds it (the tables, the reports and the
// store go over its keys generically, through the column table) and the same record typed (the
// readers that interpret its figures: explain, compare, predict).
struct RunResult {
  nlohmann::json json;
  RunRecord record;
};

// The result document at `path`; throws std::invalid_argument (a usage error: exit 2) with one
// line when the file is not a tokbench run result this tokbench can read. A sweep's row for a
// configuration that never produced a result (`invalid`, `error`, `timeout`: status, message
// and the configuration's columns, no schema_version) is read as the sweep wrote it.
nlohmann::json read_run_result(const std::filesystem::path& path);
// The same file, read and checked the same way, with its record typed.
RunResult read_result(const std::filesystem::path& path);

// `text` as a run record, the checks the result store's rows share with a file: JSON within the
// nesting limit and a double's range, an object, and each key tokbench's readers use (status,
// message, iterations and their fields, environment, config, ranks, the sweep's keys) of the type
// they use it as (every key of the column table as RunRecord's member reads it), and the values of its times: each iteration's time_ms, iter_time_ms's figures
// finite and non-negative, the time accounts (top-level and each rank's) as the account's reader
// takes them (account/time_account_json.hpp: finite non-negative times, categories summing to
// the iteration). Throws std::invalid_argument with the reason alone ("its key 'status' holds a
// number; ..."): the caller names where the text came from.
nlohmann::json parse_run_record(std::string_view text);

}  // namespace tokbench::results
