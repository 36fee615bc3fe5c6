// The `markdown` format: each table as a GitHub pipe table under a "### TITLE" heading;
// number columns right-aligned, a failed run's status in its cell, no run an empty cell. A flat
// table is one such table under its title.
#include "results/record_keys.hpp"
#include "results/reporters.hpp"

namespace tokbench::results::detail {
namespace {

// A pipe would end the cell and a line break the row; a backslash is escaped too, or a text
// ending in one would turn the pipe after it back into a cell border.
std::string escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '|')
      out += "\\|";
    else if (c == '\\')
      out += "\\\\";
    else if (c == '\n' || c == '\r')
      out += ' ';
    else
      out += c;
  }
  return out;
}

void table(const PivotTable& t, std::ostream& out) {
  out << "### " << t.title << "\n\n";
  out << '|';
  for (const auto& c : t.index_columns) out << ' ' << escape(c) << " |";
  for (const auto& e : t.executors) out << ' ' << escape(e) << " |";
  out << "\n|";
  for (const auto& c : t.index_columns) out << (results::is_numeric_column(c) ? " ---: |" : " --- |");
  for (size_t e = 0; e < t.executors.size(); ++e) out << (t.metric_key == key::status ? " --- |" : " ---: |");
  out << '\n';
  for (const auto& row : t.rows) {
    out << '|';
    for (const auto& v : row.index) out << ' ' << escape(v) << " |";
    for (const auto& cell : row.cells) out << ' ' << escape(cell_text(t, cell)) << " |";
    out << '\n';
  }
}


void write_markdown(const std::vector<PivotTable>& tables, std::ostream& out) {
  for (size_t i = 0; i < tables.size(); ++i) {
    if (i) out << '\n';
    table(tables[i], out);
  }
}

// A flat table: the same heading and pipe table, one row per record, number columns
// right-aligned by the column's kind.
void write_flat_markdown(const FlatTable& t, std::ostream& out) {
  out << "### " << escape(t.title) << "\n\n|";
  for (const auto& c : t.columns) out << ' ' << escape(flat_header(c)) << " |";
  out << "\n|";
  for (const auto& c : t.columns) out << (c.kind == results::Kind::number ? " ---: |" : " --- |");
  out << '\n';
  for (const auto& row : t.rows()) {
    out << '|';
    for (const auto& c : t.columns) out << ' ' << escape(flat_cell_text(t, c, row)) << " |";
    out << '\n';
  }
}

class MarkdownReporter final : public Reporter {
 public:
  explicit MarkdownReporter(const ReportTarget& target) : out_(target.out), options_(target.tables) {}
  void report_runs(const std::vector<nlohmann::json>& runs) override {
    const std::vector<PivotTable> tables = build_tables(runs, options_);
    write_markdown(tables, out_);
    const auto explanations = context_explanations(context_, tables.front());
    if (explanations.empty()) return;
    out_ << "\n### WHERE THE TIME GOES (against " << escape(explained_column(context_)) << ")\n\n";
    for (const auto& row : explanations) out_ << "- " << escape(explanation_line(row)) << '\n';
  }
  void report_flat_table(const FlatTable& table) override { write_flat_markdown(table, out_); }

 private:
  std::ostream& out_;
  TableOptions options_;
};

}  // namespace

std::unique_ptr<Reporter> make_markdown_reporter(const ReportTarget& target) {
  return std::make_unique<MarkdownReporter>(target);
}

}  // namespace tokbench::results::detail
