// Each row's runs explained against one column (table_explanations.hpp).
#include "results/table_explanations.hpp"

#include <algorithm>
#include <stdexcept>

#include "results/explanation_keys.hpp"
#include "results/record_explanation.hpp"

namespace tokbench::results {
namespace {

// The index values that vary between rows, joined: the row as the sentences name it.
std::string configuration_of(const PivotTable& table, std::size_t row) {
  std::string out;
  for (std::size_t c = 0; c < table.index_columns.size(); ++c) {
    bool varies = false;
    for (const auto& r : table.rows) varies = varies || r.index[c] != table.rows.front().index[c];
    if (!varies && c != 0) continue;  // the model names a row even when it is the same in all
    out += (out.empty() ? "" : " · ") + (c == 0 ? table.rows[row].index[c]
                                                 : table.index_columns[c] + "=" + table.rows[row].index[c]);
  }
  return out;
}

}  // namespace

std::vector<RowExplanation> explain_against(const PivotTable& table, const std::string& column) {
  std::vector<RowExplanation> out;
  const auto found = std::find(table.executors.begin(), table.executors.end(), column);
  if (found == table.executors.end()) return out;
  const std::size_t base_column = static_cast<std::size_t>(found - table.executors.begin());
  for (std::size_t r = 0; r < table.rows.size(); ++r) {
    const auto& row = table.rows[r];
    for (std::size_t e = 0; e < table.executors.size(); ++e) {
      if (e == base_column || row.runs.size() <= e || row.runs[e] == nullptr) continue;
      RowExplanation x;
      x.configuration = configuration_of(table, r);
      x.executor = table.executors[e];
      const nlohmann::json* base = row.runs.size() > base_column ? row.runs[base_column] : nullptr;
      if (base == nullptr) {
        x.unavailable = "no run in column '" + column + "' for this configuration";
      } else {
        try {
          // The table's runs passed the readers' checks; a refusal here is the cell's reason.
          x.explanation = results::explain_records(record_from_json(*base), record_from_json(*row.runs[e]), column,
                                                   table.executors[e]);
        } catch (const std::invalid_argument& why) {
          x.unavailable = why.what();
        }
      }
      out.push_back(std::move(x));
    }
  }
  return out;
}

nlohmann::json to_json(const RowExplanation& row) {
  namespace rk = explained_row_key;
  nlohmann::json j = {{rk::configuration, row.configuration}, {rk::executor, row.executor}};
  if (row.explanation)
    j[rk::explanation] = nlohmann::json::parse(account::to_json(*row.explanation).dump());
  else
    j[rk::unavailable] = row.unavailable;
  return j;
}

}  // namespace tokbench::results
