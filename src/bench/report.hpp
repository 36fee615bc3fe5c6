// The human report of one run: first the reference benchmark's lines in its order and format
// (docs/reference-benchmark.md, "The printed report") so old readers find their numbers, then
// tokbench's labelled figures. Also the resolved-config echo printed before the run
// (docs/PERFORMANCE.md, "The contract"). Unknowns print "N/A".
#pragma once

#include <ostream>

#include "bench/environment.hpp"
#include "bench/metrics.hpp"
#include "bench/resolve.hpp"

namespace tokbench::bench {

void print_config_echo(const RunPlan& plan, std::ostream& out);
void print_report(const RunPlan& plan, const MeasuredRun& run, const BenchMetrics& metrics, std::ostream& out);

// "Distributed Mode" as the reference labels it ("none", "ddp", "fsdp_zero2_none_bucketing").
std::string distributed_mode_label(const RunPlan& plan);

}  // namespace tokbench::bench
