// The `html` format: one self-contained page (inline CSS and SVG; no script, font or style
// sheet to fetch, so it opens offline and from an archive): the sweep's context, a summary of
// statuses, the two charts (html_charts.cpp), the failed runs with their messages, every table,
// and the per-run columns. Every text from the runs is escaped. A flat table is a page of its own
// (write_flat_html): its context and the one table.
#include <fmt/format.h>

#include <map>
#include <set>

#include "results/html_charts.hpp"
#include "results/html_time_account.hpp"
#include "results/record_keys.hpp"
#include "results/record_status.hpp"
#include "results/reporters.hpp"

namespace tokbench::results::detail {
namespace {

using nlohmann::json;

constexpr const char* kStyle = R"~(
:root { --fg:#1f2933; --muted:#5b6773; --line:#e3e8ee; --fail:#c0392b; --ok:#2e7d4f; }
* { box-sizing: border-box; }
body { margin: 0; background: #f4f6f9; color: var(--fg);
  font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "Liberation Sans", "DejaVu Sans", Arial, sans-serif; }
main { max-width: 1160px; margin: 0 auto; padding: 22px 20px 48px; }
header h1 { font-size: 22px; margin: 0 0 2px; letter-spacing: .2px; }
header .meta { color: var(--muted); font-size: 13px; }
header .meta b { color: var(--fg); font-weight: 600; }
.summary { display: flex; flex-wrap: wrap; gap: 8px; margin: 12px 0 4px; align-items: center; }
.badge { display: inline-block; padding: 1px 9px; border-radius: 10px; font-size: 12.5px; font-weight: 600;
  background: #e8f3ec; color: var(--ok); }
.badge.fail { background: #fdecea; color: var(--fail); }
.card { background: #fff; border: 1px solid var(--line); border-radius: 8px; padding: 14px 18px 16px;
  margin: 14px 0; box-shadow: 0 1px 2px rgba(16,24,40,.05); }
.card h2 { font-size: 16px; margin: 0 0 8px; }
.legend { display: flex; flex-wrap: wrap; gap: 4px 18px; font-size: 12.5px; margin: 0 0 6px; color: #33404d; }
.legend span { white-space: nowrap; }
.sw { display: inline-block; width: 12px; height: 12px; border-radius: 2px; vertical-align: -1px; margin-right: 6px; }
.sw-fail { background: repeating-linear-gradient(45deg, #c0392b 0 2px, #fbd5d0 2px 5px); outline: 1px dashed #c0392b; }
.sw-line { vertical-align: -1px; margin-right: 6px; }
svg.chart { width: 100%; height: auto; display: block; font-family: inherit; }
.note { color: var(--muted); font-size: 12.5px; margin: 4px 0; }
.scroll { overflow-x: auto; }
table { border-collapse: collapse; font-size: 12.5px; margin: 4px 0 10px; }
caption { text-align: left; font-weight: 700; font-size: 13px; padding: 6px 0; letter-spacing: .3px; }
th, td { padding: 3px 10px; border-bottom: 1px solid var(--line); white-space: nowrap; text-align: left; }
thead th { background: #f0f3f7; font-weight: 600; border-bottom: 1px solid #d5dbe2; }
th.right { text-align: right; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
td.missing { color: #b0b8c1; text-align: right; }
td.na { color: var(--muted); font-style: italic; text-align: right; }
td.fail, td.status { text-align: right; }
.status-fail { background: #fdecea; color: var(--fail); font-weight: 700; padding: 0 6px; border-radius: 3px; }
.status-ok { color: var(--ok); font-weight: 600; }
td.message { white-space: normal; min-width: 260px; max-width: 420px; color: #33404d; }
ul.failures { margin: 4px 0 0; padding-left: 18px; }
ul.failures li { margin: 3px 0; }
details summary { cursor: pointer; color: var(--muted); font-size: 12.5px; }
pre { background: #f7f9fb; border: 1px solid var(--line); padding: 8px; font-size: 12px; overflow-x: auto; }
footer { color: var(--muted); font-size: 12px; margin-top: 18px; }
)~";

std::string group_thousands(const std::string& number) {
  // "12345.6" -> "12,345.6": tables of tokens/s read at a glance.
  const size_t start = (!number.empty() && (number[0] == '-' || number[0] == '+')) ? 1 : 0;
  size_t end = number.find_first_not_of("0123456789", start);
  if (end == std::string::npos) end = number.size();
  std::string out = number.substr(0, start);
  for (size_t i = start; i < end; ++i) {
    out += number[i];
    const size_t left = end - i - 1;
    if (left && left % 3 == 0) out += ',';
  }
  return out + number.substr(end);
}

std::string status_span(const std::string& status) {
  return fmt::format(R"~(<span class="{}">{}</span>)~", results::holds_figures(status) ? "status-ok" : "status-fail",
                     html_escape(status));
}

std::string header(const json& context, const std::vector<json>& runs, const PivotTable& full) {
  std::string h = "<header><h1>tokbench sweep</h1>";
  // Scalars of the context on one line; nested parts (the matrix, the machine) folded below.
  std::vector<std::string> items;
  bool nested = false;
  if (context.is_object()) {
    for (const auto& [key, value] : context.items()) {
      if (value.is_structured()) {
        nested = true;
        continue;
      }
      items.push_back(fmt::format("{} <b>{}</b>", html_escape(key), html_escape(scalar_text(value))));
    }
  } else if (!context.is_null()) {
    nested = true;
  }
  if (!items.empty()) h += R"~(<div class="meta">)~" + fmt::format("{}", fmt::join(items, " &middot; ")) + "</div>";
  std::map<std::string, int> statuses;
  std::vector<std::string> order;
  for (const auto& run : runs) {
    const json s = run.is_object() ? run.value(key::status, json("ok")) : json("ok");
    const std::string text = s.is_string() ? s.get<std::string>() : "ok";
    if (!statuses[text]++) order.push_back(text);
  }
  h += R"~(<div class="summary">)~";
  h += fmt::format(R"~(<span>{} run{}, {} configuration{}, {} executor{}:</span>)~", runs.size(),
                   runs.size() == 1 ? "" : "s", full.rows.size(), full.rows.size() == 1 ? "" : "s",
                   full.executors.size(), full.executors.size() == 1 ? "" : "s");
  for (const auto& s : order)
    h += fmt::format(R"~(<span class="badge{}">{} {}</span>)~", results::holds_figures(s) ? "" : " fail", statuses[s], html_escape(s));
  h += "</div>";
  if (nested)
    h += "<details><summary>sweep context</summary><pre>" +
         html_escape(context.dump(2, ' ', false, json::error_handler_t::replace)) + "</pre></details>";
  return h + "</header>";
}

// Failed runs, each with its configuration, executor and message.
std::string failures(const std::vector<json>& runs, const PivotTable& full) {
  const auto labels = row_label_parts(full);
  std::string items;
  for (size_t r = 0; r < full.rows.size(); ++r)
    for (size_t e = 0; e < full.executors.size(); ++e) {
      const auto& cell = full.rows[r].cells[e];
      if (!is_failure(cell)) continue;
      // The message: the first run with this row's index values and executor.
      std::string message;
      for (const auto& run : runs) {
        if (!run.is_object() || run.value(key::compiler, json()) != json(full.executors[e])) continue;
        bool same = true;
        for (size_t c = 0; c < full.index_columns.size() && same; ++c) {
          auto it = run.find(full.index_columns[c]);
          same = (it == run.end() ? json(nullptr) : *it) == full.rows[r].index_values[c];
        }
        if (same) {
          message = scalar_text(run.value(key::message, json("")));
          break;
        }
      }
      std::string label;
      for (const auto& p : labels[r]) label += (label.empty() ? "" : " · ") + p;
      items += fmt::format("<li>{} <b>{}</b> · {}{}</li>", status_span(cell->get<std::string>()), html_escape(label),
                           html_escape(full.executors[e]), message.empty() ? "" : ": " + html_escape(message));
    }
  if (items.empty()) return "";
  return R"~(<section class="card" id="failures"><h2>Failed runs</h2><ul class="failures">)~" + items + "</ul></section>";
}

std::string pivot_table(const PivotTable& t) {
  std::string h = fmt::format(R"~(<div class="scroll"><table class="pivot" data-metric="{}"><caption>{}</caption><thead><tr>)~",
                              html_escape(t.metric_key), html_escape(t.title));
  // A column of numbers is right-aligned, its "none" too (results::is_numeric_column).
  std::vector<bool> numeric(t.index_columns.size());
  for (size_t c = 0; c < t.index_columns.size(); ++c) numeric[c] = results::is_numeric_column(t.index_columns[c]);
  for (size_t c = 0; c < t.index_columns.size(); ++c)
    h += fmt::format("<th{}>{}</th>", numeric[c] ? R"~( class="right")~" : "", html_escape(t.index_columns[c]));
  for (const auto& e : t.executors) h += R"~(<th class="right">)~" + html_escape(e) + "</th>";
  h += "</tr></thead><tbody>";
  for (const auto& row : t.rows) {
    h += "<tr>";
    for (size_t c = 0; c < row.index.size(); ++c)
      h += fmt::format(R"~(<td{}>{}</td>)~", numeric[c] ? R"~( class="num")~" : "", html_escape(row.index[c]));
    for (const auto& cell : row.cells) {
      if (!cell)
        h += R"~(<td class="missing" title="no run">&mdash;</td>)~";
      else if (cell->is_number())
        h += R"~(<td class="num">)~" + html_escape(group_thousands(cell_text(t, cell))) + "</td>";
      else if (cell->is_null())
        h += R"~(<td class="na" title="the run did not give this value">N/A</td>)~";
      else
        h += fmt::format(R"~(<td class="{}">{}</td>)~", is_failure(cell) ? "fail" : key::status,
                         status_span(cell->get<std::string>()));
    }
    h += "</tr>";
  }
  return h + "</tbody></table></div>";
}

std::string runs_table(const std::vector<json>& runs) {
  const std::vector<Column> columns = scalar_columns(runs);
  std::string h = R"~(<div class="scroll"><table class="runs"><thead><tr>)~";
  for (const auto& c : columns) {
    const bool numeric = c.kind == results::Kind::number;
    h += fmt::format(R"~(<th title="{}"{}>{}{}</th>)~", html_escape(c.key), numeric ? R"~( class="right")~" : "",
                     html_escape(c.label), c.unit.empty() ? "" : " (" + html_escape(c.unit) + ")");
  }
  h += "</tr></thead><tbody>";
  for (const auto& run : runs) {
    h += "<tr>";
    for (const auto& c : columns) {
      const auto it = run.is_object() ? run.find(c.key) : run.end();
      const json v = run.is_object() && it != run.end() ? *it : json(nullptr);
      if (c.key == key::status && v.is_string())
        h += "<td>" + status_span(v.get<std::string>()) + "</td>";
      else if (c.key == key::message)
        h += R"~(<td class="message">)~" + html_escape(scalar_text(v)) + "</td>";
      else if (v.is_number())
        h += R"~(<td class="num">)~" + html_escape(format_number(c.format, v.get<double>())) + "</td>";
      else
        h += "<td>" + html_escape(v.is_null() ? std::string() : scalar_text(v)) + "</td>";
    }
    h += "</tr>";
  }
  return h + "</tbody></table></div>";
}

void write_html(const json& context, const std::vector<json>& runs, const TableOptions& options, std::ostream& out) {
  // The charts need every index column (Num GPUS for the scaling), whatever the tables show.
  const std::vector<PivotTable> full = build_tables(runs, TableOptions{});
  const std::vector<PivotTable> tables = build_tables(runs, options);
  const PivotTable& throughput = full.at(1);  // THROUGHPUT (tokens/s)

  out << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
         "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
         "<title>tokbench sweep</title>\n<style>"
      << kStyle << "</style>\n</head>\n<body>\n<main>\n";
  out << header(context, runs, throughput) << '\n';
  out << R"~(<section class="card" id="throughput"><h2>Throughput by configuration (tokens/s)</h2>)~"
      << throughput_bar_chart(throughput) << "</section>\n";
  out << R"~(<section class="card" id="scaling"><h2>Scaling with the number of ranks (tokens/s)</h2>)~"
      << scaling_line_chart(throughput) << "</section>\n";
  out << R"~(<section class="card" id="time-account"><h2>Where the time goes (ms per iteration)</h2>)~"
      << time_account_chart(throughput);
  if (const auto explanations = context_explanations(context, throughput); !explanations.empty()) {
    out << "<h3>Against " << html_escape(explained_column(context)) << "</h3><ul class=\"explanations\">";
    for (const auto& row : explanations) out << "<li>" << html_escape(explanation_line(row)) << "</li>";
    out << "</ul>";
  }
  out << "</section>\n";
  out << failures(runs, throughput) << '\n';
  out << R"~(<section class="card" id="tables"><h2>Tables</h2>)~";
  for (const auto& t : tables) out << pivot_table(t) << '\n';
  out << "</section>\n";
  out << R"~(<section class="card" id="runs"><h2>Runs</h2>)~" << runs_table(runs) << "</section>\n";
  out << "<footer>tokbench sweep report &middot; all figures as the runs reported them (docs/run.md)</footer>\n"
         "</main>\n</body>\n</html>\n";
}

// A flat table's page: its title, the document's scalar values on one line and its nested ones
// folded below (as a sweep's context), then the table, numbers right-aligned by column kind.
void write_flat_html(const FlatTable& t, std::ostream& out) {
  const nlohmann::ordered_json context = t.context();
  std::vector<std::string> items;
  nlohmann::ordered_json nested = nlohmann::ordered_json::object();
  for (const auto& [key, value] : context.items()) {
    if (value.is_structured())
      nested[key] = value;
    else
      items.push_back(fmt::format("{} <b>{}</b>", html_escape(key), html_escape(scalar_text(json(value)))));
  }
  out << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
         "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>"
      << html_escape(t.title) << "</title>\n<style>" << kStyle << "</style>\n</head>\n<body>\n<main>\n";
  out << "<header><h1>" << html_escape(t.title) << "</h1>";
  if (!items.empty()) out << R"~(<div class="meta">)~" << fmt::format("{}", fmt::join(items, " &middot; ")) << "</div>";
  if (!nested.empty())
    out << "<details><summary>context</summary><pre>"
        << html_escape(nested.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace))
        << "</pre></details>";
  out << "</header>\n";
  out << R"~(<section class="card" id="table"><div class="scroll"><table class="flat"><thead><tr>)~";
  for (const auto& c : t.columns)
    out << fmt::format(R"~(<th title="{}"{}>{}</th>)~", html_escape(c.key),
                       c.kind == results::Kind::number ? R"~( class="right")~" : "", html_escape(flat_header(c)));
  out << "</tr></thead><tbody>";
  for (const auto& row : t.rows()) {
    out << "<tr>";
    for (const auto& c : t.columns)
      out << (c.kind == results::Kind::number ? R"~(<td class="num">)~" : "<td>")
          << html_escape(flat_cell_text(t, c, row)) << "</td>";
    out << "</tr>";
  }
  out << "</tbody></table></div></section>\n";
  out << "<footer>tokbench &middot; " << html_escape(t.title) << "</footer>\n</main>\n</body>\n</html>\n";
}

class HtmlReporter final : public Reporter {
 public:
  explicit HtmlReporter(const ReportTarget& target) : out_(target.out), options_(target.tables) {}
  void report_runs(const std::vector<json>& runs) override { write_html(context_, runs, options_, out_); }
  void report_flat_table(const FlatTable& table) override { write_flat_html(table, out_); }

 private:
  std::ostream& out_;
  TableOptions options_;
};

}  // namespace

std::unique_ptr<Reporter> make_html_reporter(const ReportTarget& target) {
  return std::make_unique<HtmlReporter>(target);
}

}  // namespace tokbench::results::detail
