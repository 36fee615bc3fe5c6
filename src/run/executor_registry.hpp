// The executors that can compute a training step, one entry each: the --compile word, the
// reference's names that pick it, whether it runs in Python, what it refuses of a run (device,
// dtype, parallel mode, options) and its --compile help line. resolve.cpp, the report and the
// help read entries instead of naming executors; how a tokbench executor's computation is made
// is run_benchmark.cpp's table, keyed by the same id. Plain C++ (no LibTorch).
#pragma once

#include <string>
#include <vector>

namespace tokbench::config {
struct RunOptions;
}  // namespace tokbench::config

namespace tokbench::run {

using config::RunOptions;  // run/run_options.hpp's name for it
struct RunPlan;
struct CompilerChoice;

// Who computes the training step. A new executor is a value here, an entry in
// executor_registry.cpp and, when it is tokbench's own, a computation in run_benchmark.cpp's
// table (docs/architecture.md, "Adding an executor").
enum class Executor {
  eager,            // tokbench's LibTorch port of litgpt's step
  fused,            // tokbench's fused step (src/train/fused_computation.cpp)
  python_eager,     // litgpt in Python, PyTorch eager
  python_inductor,  // litgpt in Python under torch.compile (inductor)
  python_thunder,   // litgpt in Python under lightning-thunder
};

struct ExecutorEntry {
  Executor id;
  const char* name;                  // its --compile word, and the record's `executor`
  std::vector<std::string> aliases;  // the reference's names that pick it as they are ("inductor")
  // A family of reference names (any name containing `family_word`, e.g. thunder_inductor):
  // the choice for one of them, or std::invalid_argument naming the bad part. Null: none.
  const char* family_word = nullptr;
  CompilerChoice (*choose_family)(const std::string& name) = nullptr;
  const char* family_help = nullptr;  // the family in --compile's list of valid names
  bool python = false;                // runs python/tokbench_python_step.py (litgpt itself)
  bool fp8_layers = false;            // takes TransformerEngine's / torchao's fp8 layers
  const char* no_torchao = nullptr;   // why torchao's float8 linears do not run under it (null: they do)
  const char* help = "";              // one line for --compile's help
  // Its own refusals of a resolved plan (device, dtype, parallel mode and the options): the
  // one line, or "" when it runs it; may add warnings. Null: it refuses nothing of its own.
  std::string (*refuses)(const RunOptions& options, const RunPlan& plan, std::vector<std::string>& warnings) = nullptr;
};

// Every executor, in --compile's order (eager, fused, python-eager, python-inductor, python-thunder).
const std::vector<ExecutorEntry>& executor_entries();
const ExecutorEntry& executor_entry(Executor executor);

const char* to_string(Executor executor);  // "eager", "fused", "python-eager", ...
bool is_python(Executor executor);

// The valid --compile names in one line: "eager, fused, ..., inductor, or thunder joined by ...".
std::string valid_compiler_names();
// --compile's help: one line per executor, its name and aliases then its help line.
std::string executor_help();

}  // namespace tokbench::run
