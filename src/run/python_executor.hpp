// `--compile python-eager | python-inductor | python-thunder` (and the reference's `inductor` and
// thunder names, compiler_choice.hpp): the same configuration trained
// by litgpt in Python (python/tokbench_python_step.py), under PyTorch eager, torch.compile's
// inductor or lightning-thunder's thunder.jit,
// timed by tokbench's protocol and published as the same JSON record, so a sweep can put
// PyTorch's own numbers in the same table as tokbench's (the reference's "eager | inductor"
// columns, and thunder, the reference benchmark's own compiler). The plan is resolved and validated as for any run; the Python script is started
// as a child, its per-iteration lines are read as they come (progress, and what was measured
// when it stops), and its result goes through compute_metrics and build_result_json.
// Many ranks are a step like tokbench's own where the parallelism is concerned: the same
// launchers start `tokbench run` ranks, each reads the same rank environment and joins the
// job's store (JobStore), its child runs torch.distributed's DDP / FSDP / fully_shard over
// that store, and the ranks' records meet on rank 0 by rank_gathering's rules.
// No LibTorch here: the child owns the model.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "run/run_plan.hpp"
#include "distributed/job_store.hpp"

namespace tokbench::run {

// The interpreter and the script. The script: $TOKBENCH_PYTHON_STEP, else python/ beside the
// build folder the binary runs from (build/bin/tokbench -> python/), else the source tree the
// binary was configured from. The interpreter: $TOKBENCH_PYTHON, else that checkout's .venv
// (where scripts/bootstrap installs torch and litgpt), else python3 on PATH.
struct PythonStepCommand {
  std::string python;
  std::filesystem::path script;
  // tokbench's counting CPU allocator as a module (beside the binary), so the script's CPU
  // tensor peak is counted as tokbench's is; empty when it was not built (the peak is null).
  std::filesystem::path memory_probe;
};
PythonStepCommand locate_python_step();

// The script's command line for a resolved plan: `--config JSON`, the plan's records as one
// document (run_plan_json.hpp) plus this process's memory probe and, with many ranks, `store`,
// where the child's torch.distributed meets the other ranks' children.
std::vector<std::string> python_step_argv(const RunPlan& plan, const PythonStepCommand& command,
                                          const distributed::StoreAddress* store = nullptr);

// Runs the plan through the Python step; returns the exit code as run_benchmark does. An
// interpreter that cannot start or cannot import torch and litgpt is a usage error
// (std::invalid_argument, exit 2) raised before any training.
int run_python_benchmark(const RunPlan& plan);

}  // namespace tokbench::run
