// The result record and its column table: the one list of what a tokbench result holds.
//
// A result record is one JSON object per run (docs/run.md, "The JSON result"). Every top-level
// key it may hold is a Column here, in the order the JSON writes them: the reference
// benchmark's keys first, then tokbench's own, then the context, then the keys a sweep adds.
// The run's JSON, the run's printed report and every sweep format read keys, labels, units and
// number formats from this table (the reporters are plug-ins over records, as Google
// Benchmark's reporters are over its runs). A key is spelled once, in record_keys.hpp; the record
// itself is results::RunRecord (run_record.hpp), whose members follow this table's order (its
// tests hold the two together). Torch-free.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>
#include <vector>

namespace tokbench::results {

// Version of the record's key set and meanings (written as `schema_version`).
// 2: world_size, ranks[], config.dist*. 3: key order and set from this table; `executor`.
inline constexpr int kSchemaVersion = 3;

enum class Section {
  reference,  // the reference benchmark's keys, with its meanings (docs/reference-benchmark.md)
  tokbench,   // tokbench's own figures
  context,    // how the run was made: config, environment, per-iteration records
  sweep,      // added by `tokbench sweep` / the history store, not by `tokbench run`
};

// What a column's values are. Reports align and type cells by it (numbers right-aligned, typed as
// numbers in spreadsheets), whatever a particular set of runs happens to hold: a column of
// numbers stays one when some run has null (a figure it could not give) or none at all.
enum class Kind {
  number,      // a number, or null
  text,        // a string, or null
  flag,        // true/false
  structured,  // an object or an array
};

struct Column {
  std::string key;      // JSON key of the record
  std::string label;    // how people see it (table headers, report lines)
  std::string unit;     // "ms", "tokens/s", "GB", ... ("" when none)
  std::string format;   // fmt spec for numbers ("{:.2f}"); "" for the shortest round-trip form
  Section section = Section::tokbench;
  bool in_report = true;  // printed by the run report (false for bulky per-iteration data)
  bool percent = false;   // a fraction people read as a percentage ("MFU: 22.14%")
  bool hide_null = false; // the report leaves it out when null (a figure only some runs have)
  Kind kind = Kind::number;
};

// Every column, in JSON order.
const std::vector<Column>& result_columns();
// The same columns in the order tables show them (CSV headers, per-run sheets): what tells runs
// apart first (the sweep's config id, the reference's index, executor, status, message), then
// the figures in JSON order.
const std::vector<Column>& tabular_columns();
// The column of `key`, or null when the table has none.
const Column* find_column(std::string_view key);
// Whether `key` is a column of numbers: the one rule every report aligns by (a key the table
// does not know is text).
bool is_numeric_column(std::string_view key);

// A value as people read it in `column`: numbers in its format, null "N/A", strings raw,
// booleans "yes"/"no", objects "k v, k v" with numbers formatted (in their own key order),
// arrays compact JSON. For nlohmann::json and nlohmann::ordered_json alike.
template <typename Json>
std::string column_text(const Column& column, const Json& value);

// The record with its keys in table order. Throws std::logic_error naming a key that has no
// column: a figure nobody described is a bug, caught by the first test that builds a record.
nlohmann::ordered_json in_column_order(const nlohmann::ordered_json& record);

}  // namespace tokbench::results
