// The HTML report's two charts, drawn as inline SVG by hand so the page opens offline with
// nothing to load. A failed run is never drawn as a number: in the bar chart it is a red hatched
// short bar with its status above it, in the scaling chart a red cross on the axis with its status.
#include "results/html_charts.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>

#include "results/reporters.hpp"
#include "results/record_keys.hpp"

namespace tokbench::results::detail {
namespace {

using nlohmann::json;

constexpr const char* kFailColor = "#c0392b";
constexpr const char* kAxisColor = "#8a96a3";
constexpr const char* kGridColor = "#e6eaef";
constexpr double kWidth = 1100;

// Numbers on axes and bars: three significant digits with k/M/G.
std::string compact(double v) {
  const double a = std::fabs(v);
  if (a >= 1e9) return fmt::format("{:.3g}G", v / 1e9);
  if (a >= 1e6) return fmt::format("{:.3g}M", v / 1e6);
  if (a >= 1e3) return fmt::format("{:.3g}k", v / 1e3);
  return fmt::format("{:.3g}", v);
}

// A round axis: the step 1, 2, 2.5 or 5 times a power of ten giving about five intervals.
struct Axis {
  double max = 1, step = 0.2;
};
Axis axis_for(double largest) {
  if (!(largest > 0) || !std::isfinite(largest)) return {};
  const double raw = largest * 1.08 / 5;
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  const double n = raw / mag;
  const double step = (n <= 1 ? 1 : n <= 2 ? 2 : n <= 2.5 ? 2.5 : n <= 5 ? 5 : 10) * mag;
  return {std::ceil(largest * 1.08 / step) * step, step};
}

// Text width estimate for layout (no font metrics without a browser): 0.6 em a character.
double text_width(const std::string& s, double font_px) { return 0.6 * font_px * s.size(); }

std::string join(const std::vector<std::string>& parts, const char* sep) {
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : sep) + p;
  return out;
}

size_t column_index(const PivotTable& t, const std::string& name) {
  auto it = std::find(t.index_columns.begin(), t.index_columns.end(), name);
  return it == t.index_columns.end() ? std::string::npos : size_t(it - t.index_columns.begin());
}

std::string short_value(const std::string& column, const std::string& value) {
  if (column == key::model_name || column == key::distributed_mode) return value;
  if (column == key::num_gpus) return value + (value == "1" ? " GPU" : " GPUs");
  if (column == key::seq_len) return "T=" + value;
  if (column == key::micro_bs) return "B=" + value;
  if (column == key::global_bs) return "G=" + value;
  if (column == key::sharding_size) return "S=" + value;
  return column + "=" + value;
}

// The y axis with its grid and labels, shared by both charts.
void draw_y_axis(std::string& svg, const Axis& axis, double left, double right, double top, double height,
                 const char* title) {
  for (double v = 0; v <= axis.max + axis.step / 2; v += axis.step) {
    const double y = top + height * (1 - v / axis.max);
    svg += fmt::format(R"~(<line x1="{:.1f}" y1="{:.1f}" x2="{:.1f}" y2="{:.1f}" stroke="{}" stroke-width="1"/>)~", left, y,
                       right, y, v == 0 ? kAxisColor : kGridColor);
    svg += fmt::format(R"~(<text x="{:.1f}" y="{:.1f}" text-anchor="end" font-size="12" fill="#5b6773">{}</text>)~",
                       left - 8, y + 4, compact(v));
  }
  svg += fmt::format(
      R"~(<text transform="translate(18,{:.1f}) rotate(-90)" text-anchor="middle" font-size="12" fill="#5b6773">{}</text>)~",
      top + height / 2, html_escape(title));
}

const char* kDashes[] = {"", "7 4", "2 4", "10 4 2 4", "4 2"};

}  // namespace

std::string html_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string executor_color(size_t index) {
  // Tableau's palette without its red, which marks failures.
  static const char* palette[] = {"#4e79a7", "#f28e2b", "#59a14f", "#b07aa1", "#76b7b2",
                                  "#edc948", "#9c755f", "#ff9da7", "#bab0ac"};
  return palette[index % std::size(palette)];
}

std::vector<std::vector<std::string>> row_label_parts(const PivotTable& t) {
  std::vector<std::vector<std::string>> labels(t.rows.size());
  for (size_t c = 0; c < t.index_columns.size(); ++c) {
    const std::string& column = t.index_columns[c];
    // Global BS is B x GA x W, told by those; "none" (no distribution, no sharding) goes
    // without saying next to "1 GPU".
    if (column == key::global_bs) continue;
    bool varies = false;
    for (const auto& row : t.rows) varies = varies || row.index[c] != t.rows.front().index[c];
    if (!varies) continue;
    for (size_t r = 0; r < t.rows.size(); ++r) {
      const std::string& v = t.rows[r].index[c];
      if (v == "none" && (column == key::distributed_mode || column == key::sharding_size)) continue;
      labels[r].push_back(short_value(column, v));
    }
  }
  for (size_t r = 0; r < t.rows.size(); ++r)  // nothing tells the rows apart: the model names them
    if (labels[r].empty() && !t.rows[r].index.empty()) labels[r].push_back(t.rows[r].index.front());
  return labels;
}

std::string throughput_bar_chart(const PivotTable& t) {
  const size_t groups = t.rows.size(), bars = t.executors.size();
  double largest = 0;
  for (const auto& row : t.rows)
    for (const auto& cell : row.cells)
      if (cell && cell->is_number()) largest = std::max(largest, cell->get<double>());
  const Axis axis = axis_for(largest);

  // Legend: executors, and the failure mark.
  std::string html = R"~(<div class="legend">)~";
  for (size_t e = 0; e < bars; ++e)
    html += fmt::format(R"~(<span><i class="sw" style="background:{}"></i>{}</span>)~", executor_color(e),
                        html_escape(t.executors[e]));
  html += R"~(<span><i class="sw sw-fail"></i>failed run (status shown)</span></div>)~";

  // Group labels: stacked lines under the group (a long label broken after its underscores,
  // as in fsdp_hybrid_zero2_ / none_bucketing) when they fit, else one rotated line each.
  const auto labels = row_label_parts(t);
  const double right = 16, top = 24;
  double left = 70;
  const double group_w0 = groups ? (kWidth - left - right) / groups : kWidth;
  std::vector<std::vector<std::string>> stacked(groups);
  bool rotate = false;
  double longest_joined = 0;
  for (size_t g = 0; g < groups; ++g) {
    for (const auto& part : labels[g]) {
      std::string line;
      size_t start = 0;
      while (start < part.size()) {
        size_t end = part.find('_', start);
        end = end == std::string::npos ? part.size() : end + 1;
        const std::string piece = part.substr(start, end - start);
        if (!line.empty() && text_width(line + piece, 12) > group_w0 - 8) {
          stacked[g].push_back(line);
          line.clear();
        }
        line += piece;
        start = end;
      }
      stacked[g].push_back(line);
    }
    for (const auto& l : stacked[g]) rotate = rotate || text_width(l, 12) > group_w0 - 8;
    longest_joined = std::max(longest_joined, text_width(join(labels[g], " · "), 12));
  }
  size_t lines = 1;
  for (const auto& l : stacked) lines = std::max(lines, l.size());
  rotate = rotate || lines > 6;
  const double slant = std::min(longest_joined, 260.0);  // rotated labels longer than this are cut
  // A rotated label of the first group reaches left of it: room for it.
  if (rotate && groups) left = std::max(left, slant * 0.77 - group_w0 / 2 + 8);
  const double plot_w = kWidth - left - right;
  const double group_w = groups ? plot_w / groups : plot_w;
  const double label_h = rotate ? slant * 0.64 + 20 : 16.0 * lines + 10;
  const double plot_h = 300;
  const double height = top + plot_h + label_h + 8;

  std::string svg = fmt::format(
      R"~(<svg class="chart" id="chart-throughput" viewBox="0 0 {:.0f} {:.0f}" role="img" aria-label="tokens per second by configuration and executor">)~",
      kWidth, height);
  svg += fmt::format(
      R"~(<defs><pattern id="hatch-fail" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><rect width="6" height="6" fill="#fbd5d0"/><line x1="0" y1="0" x2="0" y2="6" stroke="{}" stroke-width="2.5"/></pattern></defs>)~",
      kFailColor);
  draw_y_axis(svg, axis, left, kWidth - right, top, plot_h, "tokens/s");
  const double base = top + plot_h;
  const double bar_w = bars ? std::min(64.0, group_w * 0.78 / bars) : 0;
  for (size_t g = 0; g < groups; ++g) {
    const double gx = left + g * group_w;
    const double x0 = gx + (group_w - bar_w * bars) / 2;
    const std::string config = join(labels[g], " · ");
    for (size_t e = 0; e < bars; ++e) {
      const auto& cell = t.rows[g].cells[e];
      const double x = x0 + e * bar_w + 1.5, w = bar_w - 3;
      const double cx = x + w / 2;
      if (!cell || cell->is_null()) continue;  // no run here, or a finished run without tokens/s
      if (cell->is_number()) {
        const double v = cell->get<double>();
        const double h = plot_h * std::clamp(v / axis.max, 0.0, 1.0);
        svg += fmt::format(
            R"~(<rect class="bar" x="{:.1f}" y="{:.1f}" width="{:.1f}" height="{:.1f}" fill="{}"><title>{} · {}: {:.1f} tokens/s</title></rect>)~",
            x, base - h, w, h, executor_color(e), html_escape(config), html_escape(t.executors[e]), v);
        if (w >= 26)
          svg += fmt::format(R"~(<text x="{:.1f}" y="{:.1f}" text-anchor="middle" font-size="11" fill="#33404d">{}</text>)~",
                             cx, base - h - 5, compact(v));
      } else {
        const std::string status = cell->get<std::string>();
        const double h = 34;
        svg += fmt::format(
            R"~(<g class="failed"><rect x="{:.1f}" y="{:.1f}" width="{:.1f}" height="{:.1f}" fill="url(#hatch-fail)" stroke="{}" stroke-width="1.2" stroke-dasharray="3 2"/><title>{} · {}: {}</title>)~",
            x, base - h, w, h, kFailColor, html_escape(config), html_escape(t.executors[e]), html_escape(status));
        if (w >= 7 * status.size() + 4)
          svg += fmt::format(
              R"~(<text class="status" x="{:.1f}" y="{:.1f}" text-anchor="middle" font-size="12" font-weight="700" fill="{}">{}</text>)~",
              cx, base - h - 6, kFailColor, html_escape(status));
        else
          svg += fmt::format(
              R"~(<text class="status" transform="translate({:.1f},{:.1f}) rotate(-90)" font-size="12" font-weight="700" fill="{}">{}</text>)~",
              cx + 4, base - h - 6, kFailColor, html_escape(status));
        svg += "</g>";
      }
    }
    if (rotate) {
      std::string text = config;
      if (text_width(text, 12) > slant) {
        size_t cut = size_t(slant / 7.2) - 1;
        while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;  // whole characters
        text = text.substr(0, cut) + "…";
      }
      svg += fmt::format(
          R"~(<text transform="translate({:.1f},{:.1f}) rotate(-40)" text-anchor="end" font-size="12" fill="#33404d">{}</text>)~",
          gx + group_w / 2 + 4, base + 16, html_escape(text));
    } else {
      for (size_t l = 0; l < stacked[g].size(); ++l)
        svg += fmt::format(R"~(<text x="{:.1f}" y="{:.1f}" text-anchor="middle" font-size="12" fill="#33404d">{}</text>)~",
                           gx + group_w / 2, base + 18 + 15 * l, html_escape(stacked[g][l]));
    }
  }
  svg += "</svg>";
  return html + svg;
}

std::string scaling_line_chart(const PivotTable& t) {
  const size_t w_col = column_index(t, key::num_gpus);
  const size_t mode_col = column_index(t, key::distributed_mode);
  const size_t shard_col = column_index(t, key::sharding_size);
  const size_t global_col = column_index(t, key::global_bs);
  if (w_col == std::string::npos) return fmt::format(R"~(<p class="note">No "{}" in the runs: nothing to scale.</p>)~", key::num_gpus);

  // A series is one executor on one configuration as the number of ranks grows: the index
  // without Num GPUS, Global BS (it grows with the ranks) and the distributed mode. A
  // single-rank point starts every distributed series that shares the rest.
  struct Point {
    double ranks;
    Cell cell;
  };
  struct Series {
    std::string base;           // key: the configuration without the rank-dependent columns, and the executor
    std::vector<std::string> base_parts;
    size_t executor;
    std::string mode;           // "" for the single-rank points alone
    std::vector<Point> points;
  };
  std::map<std::string, std::vector<Point>> singles;                          // base+executor -> W = 1
  std::map<std::string, std::map<std::string, std::vector<Point>>> multis;   // base+executor -> mode -> W > 1
  std::map<std::string, std::pair<std::vector<std::string>, size_t>> bases;  // base+executor -> (parts, executor)
  std::vector<std::string> order;                                            // base+executor, first appearance
  std::vector<double> ranks_seen;
  for (const auto& row : t.rows) {
    const json& wv = row.index_values[w_col];
    if (!wv.is_number()) continue;
    const double ranks = wv.get<double>();
    std::vector<std::string> parts;
    for (size_t c = 0; c < t.index_columns.size(); ++c)
      if (c != w_col && c != mode_col && c != shard_col && c != global_col)
        parts.push_back(short_value(t.index_columns[c], row.index[c]));
    std::string mode = mode_col == std::string::npos ? "" : row.index[mode_col];
    if (shard_col != std::string::npos && row.index[shard_col] != "none") mode += " S=" + row.index[shard_col];
    for (size_t e = 0; e < t.executors.size(); ++e) {
      if (!row.cells[e]) continue;
      const std::string key = join(parts, "\x1f") + "\x1e" + t.executors[e];
      if (!bases.count(key)) {
        bases[key] = {parts, e};
        order.push_back(key);
      }
      if (ranks <= 1)
        singles[key].push_back({ranks, row.cells[e]});
      else
        multis[key][mode].push_back({ranks, row.cells[e]});
      if (std::find(ranks_seen.begin(), ranks_seen.end(), ranks) == ranks_seen.end()) ranks_seen.push_back(ranks);
    }
  }
  std::sort(ranks_seen.begin(), ranks_seen.end());
  std::vector<Series> series;
  for (const auto& key : order) {
    const auto& [parts, e] = bases[key];
    if (multis[key].empty()) {
      series.push_back({key, parts, e, "", singles[key]});
      continue;
    }
    for (const auto& [mode, points] : multis[key]) {
      Series s{key, parts, e, mode, singles[key]};
      s.points.insert(s.points.end(), points.begin(), points.end());
      series.push_back(std::move(s));
    }
  }
  if (series.empty()) return R"~(<p class="note">No runs with a number of ranks: nothing to scale.</p>)~";
  for (auto& s : series)
    std::stable_sort(s.points.begin(), s.points.end(), [](const Point& a, const Point& b) { return a.ranks < b.ranks; });

  // Series labels: model and executor always, the other parts where series differ in them,
  // and the distributed mode where the multi-rank runs used more than one.
  std::vector<bool> part_varies(series.front().base_parts.size(), false);
  std::vector<std::string> modes;
  for (const auto& s : series) {
    for (size_t p = 0; p < s.base_parts.size(); ++p)
      part_varies[p] = part_varies[p] || s.base_parts[p] != series.front().base_parts[p];
    if (!s.mode.empty() && std::find(modes.begin(), modes.end(), s.mode) == modes.end()) modes.push_back(s.mode);
  }
  // The dash tells apart the series of one executor (same color): one per base configuration
  // and mode, in order of appearance.
  std::map<size_t, std::vector<std::string>> dash_keys;
  auto label_of = [&](const Series& s) {
    std::vector<std::string> parts;
    for (size_t p = 0; p < s.base_parts.size(); ++p)
      if (p == 0 || part_varies[p]) parts.push_back(s.base_parts[p]);
    parts.push_back(t.executors[s.executor]);
    if (modes.size() > 1 && !s.mode.empty()) parts.push_back(s.mode);
    return join(parts, " · ");
  };
  auto dash_of = [&](const Series& s) {
    auto& keys = dash_keys[s.executor];
    const std::string k = s.base + "\x1d" + s.mode;
    auto it = std::find(keys.begin(), keys.end(), k);
    if (it == keys.end()) it = keys.insert(keys.end(), k);
    return kDashes[size_t(it - keys.begin()) % std::size(kDashes)];
  };

  double largest = 0;
  for (const auto& s : series)
    for (const auto& p : s.points)
      if (p.cell && p.cell->is_number()) largest = std::max(largest, p.cell->get<double>());
  const Axis axis = axis_for(largest);
  const double left = 70, right = 24, top = 20, plot_h = 300, bottom = 52;
  const double plot_w = kWidth - left - right;
  const double height = top + plot_h + bottom;
  const double base = top + plot_h;
  // Ranks are placed evenly in order (1, 2, 4, 8 read as a doubling axis).
  auto x_of = [&](double ranks) {
    const size_t i = std::find(ranks_seen.begin(), ranks_seen.end(), ranks) - ranks_seen.begin();
    return ranks_seen.size() == 1 ? left + plot_w / 2 : left + 40 + (plot_w - 80) * i / double(ranks_seen.size() - 1);
  };
  auto y_of = [&](double v) { return top + plot_h * (1 - std::clamp(v / axis.max, 0.0, 1.0)); };

  std::string html = R"~(<div class="legend">)~";
  std::string svg = fmt::format(
      R"~(<svg class="chart" id="chart-scaling" viewBox="0 0 {:.0f} {:.0f}" role="img" aria-label="tokens per second against the number of ranks">)~",
      kWidth, height);
  draw_y_axis(svg, axis, left, kWidth - right, top, plot_h, "tokens/s");
  for (double r : ranks_seen) {
    const double x = x_of(r);
    svg += fmt::format(R"~(<line x1="{:.1f}" y1="{:.1f}" x2="{:.1f}" y2="{:.1f}" stroke="{}"/>)~", x, base, x, base + 5,
                       kAxisColor);
    svg += fmt::format(R"~(<text x="{:.1f}" y="{:.1f}" text-anchor="middle" font-size="12" fill="#33404d">{}</text>)~", x,
                       base + 20, compact(r));
  }
  svg += fmt::format(R"~(<text x="{:.1f}" y="{:.1f}" text-anchor="middle" font-size="12" fill="#5b6773">Num GPUS (ranks)</text>)~",
                     left + plot_w / 2, base + 42);
  int failures = 0;  // failure labels stack upwards from the axis, one line each, never overlapping
  std::set<std::string> failures_drawn;  // a single-rank failure starts several series: draw it once
  std::string marks;                  // drawn after every line, so lines never cover them
  for (const auto& s : series) {
    const std::string color = executor_color(s.executor);
    const std::string dash = dash_of(s);
    const std::string label = label_of(s);
    html += fmt::format(
        R"~(<span><svg class="sw-line" width="30" height="12" viewBox="0 0 30 12"><line x1="1" y1="6" x2="29" y2="6" stroke="{}" stroke-width="2.5" stroke-dasharray="{}"/><circle cx="15" cy="6" r="3.5" fill="{}"/></svg>{}</span>)~",
        color, dash, color, html_escape(label));
    std::string path;
    for (const auto& p : s.points) {
      if (!p.cell || !p.cell->is_number()) continue;
      path += fmt::format("{}{:.1f},{:.1f}", path.empty() ? "M" : " L", x_of(p.ranks), y_of(p.cell->get<double>()));
    }
    if (!path.empty())
      svg += fmt::format(
          R"~(<path class="series" d="{}" fill="none" stroke="{}" stroke-width="2.5" stroke-dasharray="{}" stroke-linejoin="round"><title>{}</title></path>)~",
          path, color, dash, html_escape(label));
    for (const auto& p : s.points) {
      const double x = x_of(p.ranks);
      if (p.cell && p.cell->is_number()) {
        const double v = p.cell->get<double>();
        marks += fmt::format(
            R"~(<circle class="point" cx="{:.1f}" cy="{:.1f}" r="4.5" fill="{}" stroke="#fff" stroke-width="1.5"><title>{} · {} ranks: {:.1f} tokens/s</title></circle>)~",
            x, y_of(v), color, html_escape(label), compact(p.ranks), v);
      } else if (p.cell && p.cell->is_string()) {
        const std::string status = p.cell->get<std::string>();
        const std::string drawn = fmt::format("{}\x1d{}\x1d{}", s.base, p.ranks <= 1 ? "" : s.mode, p.ranks);
        if (!failures_drawn.insert(drawn).second) continue;
        const double y = base - 10 - 17 * failures++;
        const std::string text = fmt::format("{} ({})", status, t.executors[s.executor]);
        const bool flip = x + 9 + text_width(text, 12) > kWidth - 4;  // no room right of the cross
        marks += fmt::format(
            R"~(<g class="failed"><path d="M{:.1f},{:.1f} l8,8 m0,-8 l-8,8" stroke="{}" stroke-width="2.5"/><text class="status" x="{:.1f}" y="{:.1f}" text-anchor="{}" font-size="12" font-weight="700" fill="{}">{}</text><title>{} · {} ranks: {}</title></g>)~",
            x - 4, y - 4, kFailColor, flip ? x - 9 : x + 9, y + 4, flip ? "end" : "start", kFailColor,
            html_escape(text), html_escape(label), compact(p.ranks), html_escape(status));
      }
    }
  }
  svg += marks + "</svg>";
  html += R"~(<span><svg class="sw-line" width="30" height="12" viewBox="0 0 30 12"><path d="M11,2 l8,8 m0,-8 l-8,8" stroke="#c0392b" stroke-width="2.5"/></svg>failed run (status shown)</span></div>)~";
  if (ranks_seen.size() == 1)
    html += fmt::format(R"~(<p class="note">Every run used {} rank(s): runs at other rank counts draw the scaling.</p>)~",
                        compact(ranks_seen.front()));
  return html + svg;
}

}  // namespace tokbench::results::detail
