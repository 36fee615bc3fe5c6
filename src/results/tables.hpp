// Tables over a sweep's runs, and the reporters that write them in each output format.
// A run is its result JSON document as `tokbench run --json-path` writes it (docs/run.md),
// plus the keys the sweep adds (`sweep_config_id`, and for rows that never ran: `status`
// `invalid`/`timeout`/... with `message`). Torch-free.
#pragma once

#include <nlohmann/json.hpp>

#include <filesystem>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "results/result_columns.hpp"

namespace tokbench::results {


// A table pivoted as the reference's runner pivots: one row per configuration (the index
// columns), one value column per executor (the run's `compiler` key).
struct PivotTable {
  std::string title;                        // "AVERAGE ITERATION TIME (ms)", ...
  std::string metric_key;                   // the run key tabulated ("average_iter_time", ...)
  std::vector<std::string> index_columns;   // "model_name", "Num GPUS", "Seq Len", ...
  std::vector<std::string> executors;       // column order: first appearance in the runs
  std::string format;                       // fmt spec for this table's numbers ("{:.2f}"); "" for STATUS
  struct Row {
    std::vector<std::string> index;         // formatted index values
    std::vector<nlohmann::json> index_values;  // the same values as in the runs (null, number, string)
    // One per executor: a number, or the run's status text when it did not finish ("oom",
    // "invalid", ...), or nullopt when that executor has no run for this configuration. A run
    // that finished without the value (MFU with no known peak) holds a JSON null.
    std::vector<std::optional<nlohmann::json>> cells;
    // One per executor: the run each cell was taken from (into the runs build_tables was given,
    // valid while they are), or null where the executor has no run for this configuration.
    std::vector<const nlohmann::json*> runs;
  };
  std::vector<Row> rows;
};

struct TableOptions {
  // Drop index columns whose value is the same in every row (model_name stays when every
  // column would go, so a one-configuration table still names its row).
  bool only_varying_columns = false;
};

// False when built without libxlsxwriter: format_from_string("xlsx") then throws.
bool xlsx_available();

// The reference's four tables (AVERAGE ITERATION TIME (ms), THROUGHPUT (tokens/s), NORMALIZED
// THROUGHPUT (tokens/s/GPU), MEMORY ALLOCATED (GB)), then TFLOP/s PER DEVICE, MFU (%), STATUS.
// Rows in order of first appearance. When two runs of one executor share all eight index
// values but differ in n_layer, dtype, device or flops_convention, those keys join the index
// (after Sharding Size) so neither run is hidden; otherwise the first run of a cell wins, as
// the reference's pivot_table(aggfunc="first").
std::vector<PivotTable> build_tables(const std::vector<nlohmann::json>& runs, const TableOptions& options);

// A table that is flat already: one row per record, nothing to pivot (`tokbench comm`: one row
// per collective and size). The result is one JSON document that holds the rows, objects keyed
// by the columns' keys, under `rows_key`, and beside them whatever describes them (backend,
// world size, environment). The json format writes the document as it is; the other formats
// tabulate the rows by `columns` (their labels, units, number formats and kinds) and show the
// document's other values where the format has room for them.
struct FlatTable {
  std::string title;
  std::vector<Column> columns;
  nlohmann::ordered_json document;
  std::string rows_key;
  // The rows (an empty array when the document has none under rows_key).
  const nlohmann::ordered_json& rows() const;
  // The document without its rows: what the formats show as the table's context.
  nlohmann::ordered_json context() const;
  // A row's value of `key`: the row's own, else the document's when it is a scalar (a value
  // every row shares is kept once, beside the rows: a benchmark's dtype); null when neither.
  const nlohmann::ordered_json* value(const nlohmann::ordered_json& row, const std::string& key) const;
};

// Reporters are plug-ins over the runs' records, in Google Benchmark's reporter shape: a
// reporter is told the context once, then the runs, then finalizes. A format is a
// ReporterPlugin in reporter_plugins(); adding one is a report_<format>.cpp and a row there.
// Every plug-in also writes a flat table (report_flat_table), the same format's look for a
// table that needs no pivot.
struct ReportTarget {
  std::ostream& out;           // text formats, and HTML without a file
  std::filesystem::path path;  // the file of a file format (xlsx; HTML when given one)
  TableOptions tables;
};

class Reporter {
 public:
  virtual ~Reporter() = default;
  // Once, before the runs: the sweep's own description (matrix, machine, time), written where
  // the format has room for it.
  virtual void report_context(const nlohmann::json& context) { context_ = context; }
  // Every run of the report, in matrix order. Pivot tables need them all at once.
  virtual void report_runs(const std::vector<nlohmann::json>& runs) = 0;
  // After the runs: whatever the format writes last.
  virtual void finalize() {}
  // Instead of the three calls above, for a report of one flat table.
  virtual void report_flat_table(const FlatTable& table) = 0;

 protected:
  nlohmann::json context_ = nlohmann::json::object();
};

enum class FileUse {
  never,     // writes text to ReportTarget::out
  optional,  // a file when given one, else text to out (html)
  required,  // writes only a file (xlsx)
};

struct ReporterPlugin {
  std::string name;                  // what --format and BENCHMARK_OUT_FORMAT say
  std::vector<std::string> aliases;  // other accepted spellings ("md")
  FileUse file = FileUse::never;
  bool (*available)() = nullptr;     // false when built without the format's library
  std::unique_ptr<Reporter> (*make)(const ReportTarget& target) = nullptr;
};

// Every format tokbench knows, in the order help and errors list them.
const std::vector<ReporterPlugin>& reporter_plugins();

// The plug-in called `name` (or one of its aliases); throws std::invalid_argument naming the
// option it came from, the valid choices (and the one meant, when `name` is a likely typo), or
// why an installed-elsewhere format is missing.
const ReporterPlugin& format_from_string(const std::string& name, std::string_view option = "--format");

// Runs the plug-in's reporter over the runs. Files are written to a temporary name and renamed,
// so a reader never sees half a report; a file format needs `path`.
void write_report(const ReporterPlugin& format, const nlohmann::json& context, const std::vector<nlohmann::json>& runs,
                  const TableOptions& options, std::ostream& out, const std::filesystem::path& path);

// The same for a flat table, with the same rules for files; a text format given a path writes
// that file instead of `out` (atomically too).
void write_flat_report(const ReporterPlugin& format, const FlatTable& table, std::ostream& out,
                       const std::filesystem::path& path);

}  // namespace tokbench::results
