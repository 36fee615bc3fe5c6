// Validation of RunOptions against the model catalog and this machine, before any work:
// the result is a RunPlan whose every field is checked and derived (GA, device, dtype, FLOPs,
// peak). Each rejection throws std::invalid_argument with one line naming the option, the
// value and what is valid; `tokbench` maps it to exit code 2. Every count derived from the
// options (tokens and FLOPs per iteration and per run, buffer sizes) is computed with checked
// int64 arithmetic, and absurd values meet the bounds of run_options.hpp (limits::).
#pragma once

#include <string>

#include "machine/machine_info.hpp"
#include "run/metrics.hpp"
#include "run/run_options.hpp"
#include "run/run_plan.hpp"

namespace tokbench::run {

RunPlan resolve_run(const RunOptions& options, const machine::MachineInfo& machine);

// What the metrics need of a plan (sizes, model and hardware FLOPs, the peak).
MetricInputs metric_inputs(const RunPlan& plan);

// Layers below run name their config fields in messages (`seq_len`, `token_file`, ...);
// this rewrites a message's leading field into the command-line option a user typed
// (`--seq-len`, `--data`), the one place where fields map to flags.
std::string with_option_names(const std::string& message);

}  // namespace tokbench::run
