// The reporters behind write_report, one per format (report_<format>.cpp), and the few rules
// they share about how a cell reads. Internal to tokbench_report_tables.
#pragma once

#include <nlohmann/json.hpp>

#include <filesystem>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "results/table_explanations.hpp"
#include "results/tables.hpp"

namespace tokbench::results::detail {

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
// Text a spreadsheet would take for a formula (it begins with =, +, -, @, a tab or a carriage
// return): CSV, which has no types, prefixes such a text cell with ', so a value someone put in
// a shared matrix is shown, never evaluated. (xlsx needs nothing: its text cells are typed
// strings, which spreadsheets never evaluate.)
bool looks_like_formula(const std::string& text);
// The keys present in any run: the result columns first (results::tabular_columns() order),
// then other keys in order of first appearance.
std::vector<std::string> present_keys(const std::vector<nlohmann::json>& runs);

// The result columns any run holds whose values are all scalars, in tabular_columns() order:
// the per-run sheet of xlsx and HTML (nested values such as iterations stay in CSV and JSON).
std::vector<Column> scalar_columns(const std::vector<nlohmann::json>& runs);

// A flat table's header cell: its label, with its unit in parentheses when it has one.
std::string flat_header(const Column& column);
// A flat table's cell for people: the row's value (FlatTable::value) in the column's format
// (results::column_text), "" when there is none.
std::string flat_cell_text(const FlatTable& table, const Column& column, const nlohmann::ordered_json& row);

// --explain-against: the column the sweep's context names (its key `explain_against`), or ""
// when it names none; and each row's explanations against it over `table`.
std::string explained_column(const nlohmann::json& context);
std::vector<RowExplanation> context_explanations(const nlohmann::json& context, const PivotTable& table);
// "pythia-14m · T=512: fused saves ..." or "... · fused: not explained: <why>".
std::string explanation_line(const RowExplanation& row);

// The plug-ins' factories, one per report_<format>.cpp (reporter_plugins() lists them).
std::unique_ptr<Reporter> make_print_reporter(const ReportTarget& target);
std::unique_ptr<Reporter> make_csv_reporter(const ReportTarget& target);
std::unique_ptr<Reporter> make_json_reporter(const ReportTarget& target);
std::unique_ptr<Reporter> make_markdown_reporter(const ReportTarget& target);
std::unique_ptr<Reporter> make_html_reporter(const ReportTarget& target);
std::unique_ptr<Reporter> make_xlsx_reporter(const ReportTarget& target);  // throws without libxlsxwriter

}  // namespace tokbench::results::detail
