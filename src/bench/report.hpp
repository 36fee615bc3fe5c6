// The resolved-config echo printed before a run (docs/PERFORMANCE.md, "The contract"). The
// report after the run is read from the run's record: results/run_report.hpp.
#pragma once

#include <ostream>

#include "bench/environment.hpp"
#include "bench/metrics.hpp"
#include "bench/resolve.hpp"

namespace tokbench::bench {

void print_config_echo(const RunPlan& plan, std::ostream& out);

// "Distributed Mode" as the reference labels it ("none", "ddp", "fsdp_zero2_none_bucketing").
std::string distributed_mode_label(const RunPlan& plan);

}  // namespace tokbench::bench
