// The `print` format: each table as the reference's runner printed it — its title, then
// print(DataFrame) of the pivot after reset_index() — reproducing pandas' text layout
// (pandas.io.formats.format, display.precision 6) so old and new outputs read alike:
//  * a left-justified row number under the columns' name ("compiler"), then every column
//    right-justified, columns joined by one space;
//  * numeric columns carry a leading space in header and values ("{: d}", "{: .6f}"), text
//    columns a leading space in values only;
//  * a float column shares its decimals: 6, less the trailing zeros all its numbers have, at
//    least one; scientific notation when a value is under 1e-6, or over 1e6 with a value wider
//    than 12 characters; missing values read NaN;
//  * a column holding any text (a failed run's status) is pandas' object column: each float
//    formatted alone ("{: .6f}" less its own trailing zeros).
// Which columns are "numeric" here is pandas' inference from the values (a dtype), on purpose:
// it reproduces the reference's text byte for byte. Every other format aligns by the column
// table's kind (results::is_numeric_column).
// Unlike print(df) nothing is elided: no "..." for wide or long tables, no wrapping at 80 columns.
// A flat table (print_flat_table) is plain aligned columns under its title.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <regex>

#include "results/record_keys.hpp"
#include "results/reporters.hpp"

namespace tokbench::results::detail {
namespace {

using nlohmann::json;

struct TextColumn {
  std::string header;
  std::vector<std::string> values;
  bool left = false;  // the row numbers
};

// Characters, not bytes: pandas pads by len() of the str.
size_t width(const std::string& s) {
  return std::count_if(s.begin(), s.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; });
}

std::string pad(const std::string& s, size_t w, bool left) {
  const size_t n = width(s);
  if (n >= w) return s;
  return left ? s + std::string(w - n, ' ') : std::string(w - n, ' ') + s;
}

// pandas' _trim_zeros_float: drop a trailing zero from every number while all of them end in
// one, then give "12." its "0" back.
void trim_zeros(std::vector<std::string>& values) {
  static const std::regex number(R"(^\s*[+-]?[0-9]+\.[0-9]*$)");
  auto is_number = [](const std::string& s) { return std::regex_match(s, number); };
  for (;;) {
    bool any = false, all_zero = true;
    for (const auto& v : values)
      if (is_number(v)) {
        any = true;
        all_zero = all_zero && v.back() == '0';
      }
    if (!any || !all_zero) break;
    for (auto& v : values)
      if (is_number(v)) v.pop_back();
  }
  for (auto& v : values)
    if (is_number(v) && v.back() == '.') v += '0';
}

// pandas' _trim_zeros_single_float, for a float inside an object column.
std::string trim_single(std::string s) {
  while (!s.empty() && s.back() == '0') s.pop_back();
  if (!s.empty() && s.back() == '.') s += '0';
  return s;
}

std::vector<std::string> float_column(const std::vector<std::optional<double>>& values) {
  auto render = [&](const char* spec) {
    std::vector<std::string> out;
    for (const auto& v : values) out.push_back(v ? fmt::format(fmt::runtime(spec), *v) : std::string("NaN"));
    trim_zeros(out);
    return out;
  };
  std::vector<std::string> out = render("{: .6f}");
  size_t longest = 0;
  bool large = false, small = false;
  for (size_t i = 0; i < values.size(); ++i) {
    longest = std::max(longest, out[i].size());
    if (!values[i]) continue;
    const double a = std::fabs(*values[i]);
    large = large || a > 1e6;
    small = small || (a < 1e-6 && a > 0);
  }
  if (small || (longest > 12 && large)) out = render("{: .6e}");
  return out;
}

enum class Kind { integer, floating, text };

Kind kind_of(const std::vector<json>& values) {
  bool all_int = true;
  for (const auto& v : values) {
    if (!v.is_number()) return Kind::text;
    all_int = all_int && v.is_number_integer();
  }
  return all_int ? Kind::integer : Kind::floating;
}

// One column as pandas prints a column of that dtype. `missing` values are NaN.
TextColumn column_of(const std::string& name, const std::vector<json>& values, const std::vector<bool>& missing) {
  std::vector<json> present;
  for (size_t i = 0; i < values.size(); ++i)
    if (!missing[i]) present.push_back(values[i]);
  TextColumn col;
  const Kind kind = kind_of(present);
  if (kind == Kind::integer && present.size() == values.size()) {
    col.header = " " + name;
    for (const auto& v : values) col.values.push_back(fmt::format("{: d}", v.get<std::int64_t>()));
  } else if (kind != Kind::text) {  // floats, or integers with a NaN among them
    col.header = " " + name;
    std::vector<std::optional<double>> numbers;
    for (size_t i = 0; i < values.size(); ++i)
      numbers.push_back(missing[i] ? std::nullopt : std::optional<double>(values[i].get<double>()));
    col.values = float_column(numbers);
  } else {
    col.header = name;
    for (size_t i = 0; i < values.size(); ++i) {
      const json& v = values[i];
      if (missing[i])
        col.values.push_back(" NaN");
      else if (v.is_number_float())
        col.values.push_back(trim_single(fmt::format("{: .6f}", v.get<double>())));
      else
        col.values.push_back(std::string(" ").append(scalar_text(v)));  // (" " + string trips GCC 12's -Wrestrict)
    }
  }
  return col;
}

// The header line, then one line per row: each column padded to its widest text, on the right
// for a left-aligned column, on the left otherwise; trailing blanks trimmed.
void write_columns(const std::vector<TextColumn>& columns, const char* separator, std::ostream& out) {
  std::vector<size_t> widths;
  for (const auto& c : columns) {
    size_t w = width(c.header);
    for (const auto& v : c.values) w = std::max(w, width(v));
    widths.push_back(w);
  }
  auto line = [&](auto&& text_of) {
    std::string s;
    for (size_t c = 0; c < columns.size(); ++c) {
      if (c) s += separator;
      s += pad(text_of(columns[c]), widths[c], columns[c].left);
    }
    // A left-aligned last column pads on the right (the row numbers with no column after them,
    // a flat table's text): trim it.
    while (!s.empty() && s.back() == ' ') s.pop_back();
    out << s << '\n';
  };
  line([](const TextColumn& c) { return c.header; });
  const size_t rows = columns.empty() ? 0 : columns.front().values.size();
  for (size_t r = 0; r < rows; ++r) line([r](const TextColumn& c) { return c.values[r]; });
}

void print_table(const PivotTable& t, std::ostream& out) {
  out << t.title << '\n';
  if (t.rows.empty()) {
    std::vector<std::string> names = t.index_columns;
    names.insert(names.end(), t.executors.begin(), t.executors.end());
    out << "Empty DataFrame\nColumns: [" << fmt::format("{}", fmt::join(names, ", ")) << "]\nIndex: []\n";
    return;
  }
  std::vector<TextColumn> columns;
  // pandas prints the pivot's column key (the runs' compiler) above the row numbers.
  TextColumn rownum{key::compiler, {}, true};
  for (size_t r = 0; r < t.rows.size(); ++r) rownum.values.push_back(std::to_string(r));
  columns.push_back(rownum);
  const std::vector<bool> none_missing(t.rows.size(), false);
  for (size_t c = 0; c < t.index_columns.size(); ++c) {
    std::vector<json> values;
    for (const auto& row : t.rows) {
      // Null reads "none" (the reference's fillna("none")), making the column text.
      values.push_back(row.index_values[c].is_null() ? json("none") : row.index_values[c]);
    }
    columns.push_back(column_of(t.index_columns[c], values, none_missing));
  }
  for (size_t e = 0; e < t.executors.size(); ++e) {
    std::vector<json> values;
    std::vector<bool> missing;
    for (const auto& row : t.rows) {
      const auto& cell = row.cells[e];
      // pivot_table's "first" skips nulls: a finished run without the value is NaN as well.
      const bool absent = !cell || cell->is_null();
      missing.push_back(absent);
      values.push_back(absent ? json(nullptr) : *cell);
    }
    columns.push_back(column_of(t.executors[e], values, missing));
  }
  write_columns(columns, " ", out);
}

// A flat table: its title, then its columns under their headers, numbers in the column's format
// and right-aligned, text left-aligned, two spaces apart (no pandas layout to reproduce here).
void print_flat_table(const FlatTable& t, std::ostream& out) {
  out << t.title << '\n';
  std::vector<TextColumn> columns;
  for (const auto& c : t.columns) {
    TextColumn column{flat_header(c), {}, c.kind != results::Kind::number};
    for (const auto& row : t.rows()) column.values.push_back(flat_cell_text(t, c, row));
    columns.push_back(std::move(column));
  }
  write_columns(columns, "  ", out);
}


void write_print(const std::vector<PivotTable>& tables, std::ostream& out) {
  for (size_t i = 0; i < tables.size(); ++i) {
    if (i) out << '\n';
    print_table(tables[i], out);
  }
}

class PrintReporter final : public Reporter {
 public:
  explicit PrintReporter(const ReportTarget& target) : out_(target.out), options_(target.tables) {}
  void report_runs(const std::vector<nlohmann::json>& runs) override {
    const std::vector<PivotTable> tables = build_tables(runs, options_);
    write_print(tables, out_);
    const auto explanations = context_explanations(context_, tables.front());
    if (explanations.empty()) return;
    out_ << "\nWHERE THE TIME GOES (against " << explained_column(context_) << ")\n";
    for (const auto& row : explanations) out_ << explanation_line(row) << '\n';
  }
  void report_flat_table(const FlatTable& table) override { print_flat_table(table, out_); }

 private:
  std::ostream& out_;
  TableOptions options_;
};

}  // namespace

std::unique_ptr<Reporter> make_print_reporter(const ReportTarget& target) {
  return std::make_unique<PrintReporter>(target);
}

}  // namespace tokbench::results::detail
