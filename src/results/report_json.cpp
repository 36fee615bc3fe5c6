// The `json` format: one document, {"context": ..., "runs": [...]}, every run as it came (and,
// with --explain-against, "explanations"); for a flat table, its document.
#include "results/reporters.hpp"
#include "results/report_keys.hpp"

namespace tokbench::results::detail {
namespace {

class JsonReporter final : public Reporter {
 public:
  explicit JsonReporter(const ReportTarget& target) : out_(target.out) {}
  void report_runs(const std::vector<nlohmann::json>& runs) override {
    nlohmann::json doc = nlohmann::json::object();
    doc[report_key::context] = context_;
    doc[report_key::runs] = runs;
    // --explain-against: each row's runs explained against that column (table_explanations.hpp).
    if (!explained_column(context_).empty()) {
      nlohmann::json explanations = nlohmann::json::array();
      for (const auto& row : context_explanations(context_, build_tables(runs, TableOptions{}).front()))
        explanations.push_back(to_json(row));
      doc["explanations"] = std::move(explanations);
    }
    // Invalid UTF-8 in a message (a crashed process's output) is replaced, not fatal.
    out_ << doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
  }
  // A flat table's document as it is, rows and all, in its own key order.
  void report_flat_table(const FlatTable& table) override {
    out_ << table.document.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) << '\n';
  }

 private:
  std::ostream& out_;
};

}  // namespace

std::unique_ptr<Reporter> make_json_reporter(const ReportTarget& target) { return std::make_unique<JsonReporter>(target); }

}  // namespace tokbench::results::detail
