// Tables over a sweep's runs, and the reporters that write them in each output format.
// A run is its result JSON document as `tokbench run --json-path` writes it (docs/run.md),
// plus the keys the sweep adds (`sweep_config_id`, and for rows that never ran: `status`
// `invalid`/`timeout`/... with `message`). Torch-free.
#pragma once

#include <nlohmann/json.hpp>

#include <filesystem>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "results/result_columns.hpp"

namespace tokbench::sweep {

// The per-run columns (key, label, unit, number format) are the result record's column table.
using results::Column;

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

enum class Format { print, csv, json, markdown, xlsx, html };
// "print", "csv", "json", "markdown" (also "md"), "xlsx", "html"; throws std::invalid_argument
// naming the valid choices.
Format format_from_string(const std::string& name);

// Writes the sweep in `format`. Text formats go to `out`; xlsx and html need `path` (a file).
// `context` is the sweep's own description (matrix, machine, time), included where the format
// has room for it (JSON: {"context": ..., "runs": [...]}).
void write_report(Format format, const nlohmann::json& context, const std::vector<nlohmann::json>& runs,
                  const TableOptions& options, std::ostream& out, const std::filesystem::path& path);

}  // namespace tokbench::sweep
