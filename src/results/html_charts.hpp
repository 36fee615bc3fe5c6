// The HTML report's charts, as inline SVG (no script, no external file): tokens/s per
// configuration grouped by executor, and tokens/s against the number of ranks. Internal to
// tokbench_report_tables.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "results/tables.hpp"

namespace tokbench::results::detail {

// Text for HTML element content and attribute values: & < > " ' escaped.
std::string html_escape(std::string_view text);
// The color of the executor at `index` in the tables' order, the same in every chart.
std::string executor_color(size_t index);
// Per row: the index values that differ between rows, short ("phi-2", "2 GPUs", "T=512").
std::vector<std::vector<std::string>> row_label_parts(const PivotTable& table);

// Both take the THROUGHPUT (tokens/s) table built with every index column. Each returns a
// legend and an <svg class="chart">.
std::string throughput_bar_chart(const PivotTable& throughput);
std::string scaling_line_chart(const PivotTable& throughput);

}  // namespace tokbench::results::detail
