// The HTML report's time-account chart: one horizontal bar per run that has a time account,
// its length the iteration time, stacked by category (docs/time-account.md), with a tick where
// the iteration would end at the peak (MFU 100%). Inline SVG like the other charts. Internal
// to tokbench_report_tables.
#pragma once

#include <string>

#include "results/tables.hpp"

namespace tokbench::results::detail {

// Over any of build_tables' tables built with every index column (they share rows and runs):
// a legend and an <svg class="chart">, or a note when no run has an account.
std::string time_account_chart(const PivotTable& table);

}  // namespace tokbench::results::detail
