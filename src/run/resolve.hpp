// Validation of RunOptions against the model catalog and this machine, before any work:
// the result is a RunPlan whose every field is checked and derived (GA, device, dtype, FLOPs,
// peak). Each rejection throws std::invalid_argument with one line naming the option, the
// value and what is valid; `tokbench` maps it to exit code 2. Every count derived from the
// options (tokens and FLOPs per iteration and per run, buffer sizes) is computed with checked
// int64 arithmetic, and absurd values meet the bounds of run_options.hpp (limits::).
#pragma once

#include <filesystem>
#include <string>

#include "machine/machine_info.hpp"
#include "run/metrics.hpp"
#include "run/run_options.hpp"
#include "run/run_plan.hpp"

namespace tokbench::run {

// TOKBENCH_TEST_SAME_START=1 (a test hook, not an option; docs/eager-parity.md): a Python
// executor's step starts where tokbench's own steps start, from tokbench's initial weights
// (model::GPTImpl::reset_parameters for --seed) and tokbench's synthetic tokens (--data-seed),
// instead of torch.manual_seed's and torch.randint's; tokbench's executors start there anyway.
// So an MoE routes the same tokens to the same experts on both sides. Any value but 0 or 1 is
// refused (exit 2).
inline constexpr const char* kTestSameStartEnv = "TOKBENCH_TEST_SAME_START";

// --profile PATH's file for one rank of several: PATH with _rankR before its extension
// (trace.json -> trace_rank1.json).
std::filesystem::path rank_profile_path(const std::filesystem::path& path, int rank);

RunPlan resolve_run(const RunOptions& options, const machine::MachineInfo& machine);

// What the metrics need of a plan (sizes, model and hardware FLOPs, the peak).
MetricInputs metric_inputs(const RunPlan& plan);

// Layers below run name their config fields in messages (`seq_len`, `token_file`, ...);
// this rewrites a message's leading field into the command-line option a user typed
// (`--seq-len`, `--data`), the one place where fields map to flags.
std::string with_option_names(const std::string& message);

}  // namespace tokbench::run
