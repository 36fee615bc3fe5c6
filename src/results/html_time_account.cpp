// The time-account bars of the HTML report (html_time_account.hpp), drawn by hand as inline SVG
// so that the page opens offline, as the other charts are.
#include "results/html_time_account.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <vector>

#include "account/category.hpp"
#include "account/time_account_keys.hpp"
#include "results/html_charts.hpp"
#include "results/record_keys.hpp"

namespace tokbench::results::detail {
namespace {

namespace tak = account::time_account_key;

constexpr double kWidth = 1100;
constexpr double kBarHeight = 22, kBarGap = 8;

// One color per category, in account::all_categories() order; red is kept for failures.
constexpr std::array<const char*, account::kCategoryCount> kCategoryColors = {
    "#4e79a7",  // gemm
    "#f28e2b",  // attention
    "#edc948",  // normalization
    "#59a14f",  // elementwise
    "#b07aa1",  // loss
    "#76b7b2",  // optimizer
    "#9c755f",  // data_host
    "#ff9da7",  // exposed_comm
    "#bab0ac",  // device_idle
    "#d9d9d9",  // other
};

struct Bar {
  std::string label;  // configuration · executor
  double iteration_ms = 0;
  std::array<double, account::kCategoryCount> ms{};
  std::array<double, account::kCategoryCount> share{};
  double ideal_ms = -1;  // at the peak (MFU x iteration); < 0 without a peak
};

double number_at(const nlohmann::json& j, const char* key) {
  const auto it = j.find(key);
  return it != j.end() && it->is_number() ? it->get<double>() : std::nan("");
}

// A round scale end: 1, 2, 2.5 or 5 times a power of ten, at or above `largest`.
double round_up(double largest) {
  if (!(largest > 0) || !std::isfinite(largest)) return 1;
  const double mag = std::pow(10.0, std::floor(std::log10(largest)));
  for (const double n : {1.0, 2.0, 2.5, 5.0, 10.0})
    if (n * mag >= largest) return n * mag;
  return 10 * mag;
}

}  // namespace

std::string time_account_chart(const PivotTable& table) {
  const auto labels = row_label_parts(table);
  std::vector<Bar> bars;
  for (std::size_t r = 0; r < table.rows.size(); ++r) {
    std::string configuration;
    for (const auto& part : labels[r]) configuration += (configuration.empty() ? "" : " · ") + part;
    for (std::size_t e = 0; e < table.executors.size() && e < table.rows[r].runs.size(); ++e) {
      const nlohmann::json* run = table.rows[r].runs[e];
      if (run == nullptr || !run->is_object()) continue;
      const auto account = run->find(key::time_account);
      if (account == run->end() || !account->is_object() || !account->contains(tak::categories)) continue;
      Bar bar;
      bar.label = configuration + " · " + table.executors[e];
      bar.iteration_ms = number_at(*account, tak::iteration_s) * 1e3;
      if (!(bar.iteration_ms > 0)) continue;
      const auto& categories = (*account)[tak::categories];
      for (const auto c : account::all_categories()) {
        const auto it = categories.find(std::string(account::json_name(c)));
        if (it == categories.end() || !it->is_object()) continue;
        const double seconds = number_at(*it, tak::s), share = number_at(*it, tak::share);
        bar.ms[account::index_of(c)] = std::isfinite(seconds) ? seconds * 1e3 : 0;
        bar.share[account::index_of(c)] = std::isfinite(share) ? share : 0;
      }
      const double mfu = number_at(*account, tak::mfu);
      if (std::isfinite(mfu) && mfu > 0) bar.ideal_ms = mfu * bar.iteration_ms;
      bars.push_back(std::move(bar));
    }
  }
  if (bars.empty())
    return R"~(<p class="note">No run has a time account (tokbench run --time-account-iters N; docs/time-account.md).</p>)~";

  std::string html = R"~(<div class="legend">)~";
  for (const auto c : account::all_categories())
    html += fmt::format(R"~(<span><i class="sw" style="background:{}"></i>{}</span>)~",
                        kCategoryColors[account::index_of(c)], html_escape(account::label(c)));
  html += R"~(<span><i class="sw" style="background:#1f2a36;width:3px"></i>the iteration at the peak (MFU 100%)</span></div>)~";

  double longest_label = 0, largest = 0;
  for (const auto& b : bars) {
    longest_label = std::max(longest_label, 0.6 * 12 * static_cast<double>(b.label.size()));
    largest = std::max(largest, b.iteration_ms);
  }
  const double left = std::min(std::max(longest_label + 12, 120.0), 420.0), right = 150, top = 26;
  const double plot_w = kWidth - left - right;
  const double scale_end = round_up(largest);
  const double height = top + bars.size() * (kBarHeight + kBarGap) + 10;
  std::string svg = fmt::format(
      R"~(<svg class="chart" id="chart-time-account" viewBox="0 0 {:.0f} {:.0f}" role="img" aria-label="where each run's iteration time goes, by category">)~",
      kWidth, height);
  for (int i = 0; i <= 4; ++i) {  // the time axis: five ticks
    const double v = scale_end * i / 4, x = left + plot_w * i / 4;
    svg += fmt::format(R"~(<line x1="{:.1f}" y1="{:.1f}" x2="{:.1f}" y2="{:.1f}" stroke="{}" stroke-width="1"/>)~", x,
                       top - 6, x, height - 8, i == 0 ? "#8a96a3" : "#e6eaef");
    svg += fmt::format(R"~(<text x="{:.1f}" y="{:.1f}" text-anchor="middle" font-size="11" fill="#5b6773">{:g} ms</text>)~",
                       x, top - 10, v);
  }
  for (std::size_t i = 0; i < bars.size(); ++i) {
    const Bar& b = bars[i];
    const double y = top + i * (kBarHeight + kBarGap);
    std::string label = b.label;
    if (0.6 * 12 * static_cast<double>(label.size()) > left - 12) {
      std::size_t cut = static_cast<std::size_t>((left - 12) / 7.2) - 1;
      while (cut > 0 && (static_cast<unsigned char>(label[cut]) & 0xC0) == 0x80) --cut;  // whole characters
      label = label.substr(0, cut) + "…";
    }
    svg += fmt::format(R"~(<text x="{:.1f}" y="{:.1f}" text-anchor="end" font-size="12" fill="#33404d">{}<title>{}</title></text>)~",
                       left - 8, y + kBarHeight / 2 + 4, html_escape(label), html_escape(b.label));
    double x = left;
    for (const auto c : account::all_categories()) {
      const double ms = b.ms[account::index_of(c)];
      if (!(ms > 0)) continue;
      const double w = plot_w * ms / scale_end;
      svg += fmt::format(
          R"~(<rect class="segment" data-category="{}" x="{:.2f}" y="{:.1f}" width="{:.2f}" height="{:.1f}" fill="{}"><title>{}: {} {:.2f} ms ({:.1f}%)</title></rect>)~",
          account::json_name(c), x, y, w, kBarHeight, kCategoryColors[account::index_of(c)], html_escape(b.label),
          html_escape(account::label(c)), ms, 100 * b.share[account::index_of(c)]);
      x += w;
    }
    if (b.ideal_ms > 0) {
      const double ix = left + plot_w * b.ideal_ms / scale_end;
      svg += fmt::format(
          R"~(<line class="ideal" x1="{:.1f}" y1="{:.1f}" x2="{:.1f}" y2="{:.1f}" stroke="#1f2a36" stroke-width="3"><title>{}: {:.2f} ms at the peak (MFU 100%)</title></line>)~",
          ix, y - 3, ix, y + kBarHeight + 3, html_escape(b.label), b.ideal_ms);
    }
    const std::string figure =
        b.ideal_ms > 0 ? fmt::format("{:.1f} ms · MFU {:.1f}%", b.iteration_ms, 100 * b.ideal_ms / b.iteration_ms)
                       : fmt::format("{:.1f} ms", b.iteration_ms);
    svg += fmt::format(R"~(<text x="{:.1f}" y="{:.1f}" font-size="12" fill="#33404d">{}</text>)~", x + 6,
                       y + kBarHeight / 2 + 4, html_escape(figure));
  }
  svg += "</svg>";
  return html + svg;
}

}  // namespace tokbench::results::detail
