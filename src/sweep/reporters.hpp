// The reporters behind write_report, one per format (report_<format>.cpp), and the few rules
// they share about how a cell reads. Internal to tokbench_sweep_tables.
#pragma once

#include <nlohmann/json.hpp>

#include <filesystem>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "sweep/sweep_tables.hpp"

namespace tokbench::sweep::detail {

using Cell = std::optional<nlohmann::json>;

// A cell for people: the number in the table's format, the status text of a failed run, "N/A"
// for a finished run without the value, "" for no run.
std::string cell_text(const PivotTable& table, const Cell& cell);
// A failed run's cell (its status text, anything but "ok").
bool is_failure(const Cell& cell);
// A number in a fmt spec such as "{:.2f}" (empty spec: shortest round-trip form).
std::string format_number(const std::string& spec, double value);
// A JSON value as one field of text: strings raw, null empty, nested values compact JSON.
std::string scalar_text(const nlohmann::json& value);
// The keys present in any run: the result columns first (results::tabular_columns() order),
// then other keys in order of first appearance.
std::vector<std::string> present_keys(const std::vector<nlohmann::json>& runs);

// The result columns any run holds whose values are all scalars, in tabular_columns() order:
// the per-run sheet of xlsx and HTML (nested values such as iterations stay in CSV and JSON).
std::vector<Column> scalar_columns(const std::vector<nlohmann::json>& runs);

void write_print(const std::vector<PivotTable>& tables, std::ostream& out);
void write_csv(const std::vector<nlohmann::json>& runs, std::ostream& out);
void write_json(const nlohmann::json& context, const std::vector<nlohmann::json>& runs, std::ostream& out);
void write_markdown(const std::vector<PivotTable>& tables, std::ostream& out);
void write_html(const nlohmann::json& context, const std::vector<nlohmann::json>& runs,
                const TableOptions& options, std::ostream& out);
void write_xlsx(const std::vector<PivotTable>& tables, const std::vector<nlohmann::json>& runs,
                const std::filesystem::path& path);

}  // namespace tokbench::sweep::detail
