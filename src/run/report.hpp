// The resolved-config echo printed before a run (docs/PERFORMANCE.md, "The contract"). The
// report after the run is read from the run's record: results/run_report.hpp.
#pragma once

#include <ostream>

#include "machine/environment.hpp"
#include "run/metrics.hpp"
#include "run/run_plan.hpp"

namespace tokbench::run {

void print_config_echo(const RunPlan& plan, std::ostream& out);

// "Distributed Mode" as the reference labels it ("none", "ddp", "fsdp_zero2_none_bucketing").
std::string distributed_mode_label(const RunPlan& plan);

}  // namespace tokbench::run
