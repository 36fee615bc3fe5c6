// `tokbench sweep --explain-against COLUMN`: each configuration's runs in the other columns
// explained against its run in COLUMN (results/record_explanation.hpp, the same check and
// arithmetic as `tokbench explain`). The reporters read the column from the sweep's context
// (its key `explain_against`) and show what this returns: print and markdown as a section after
// the tables, json as the document's `explanations`, html as a section beside the time-account
// bars. Torch-free.
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

#include "account/explanation.hpp"
#include "results/tables.hpp"

namespace tokbench::results {

struct RowExplanation {
  std::string configuration;  // the row, by the index values that vary ("pythia-14m · T=512")
  std::string executor;       // the column explained
  std::optional<account::Explanation> explanation;
  std::string unavailable;    // why there is none: no run in COLUMN, a run not ok, no account
};

// Per row of `table` (any of build_tables' tables: they share rows and runs), per column other
// than `column` that has a run. Empty when `column` is not one of the table's executors.
std::vector<RowExplanation> explain_against(const PivotTable& table, const std::string& column);

// The context key the reporters read, and what a row's explanation is in JSON.
inline constexpr const char* kExplainAgainstKey = "explain_against";
nlohmann::json to_json(const RowExplanation& row);

}  // namespace tokbench::results
