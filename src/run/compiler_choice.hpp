// `--compile` names, the reference benchmark's and tokbench's, to the executor that runs them.
// The reference's runner passes benchmark_litgpt.py's names (`eager`, `inductor`, `thunder`,
// `thunder_inductor`, ...) and pivots the JSON results on `compiler`; tokbench takes the same
// names, keeps the name as given for that key, and records the executor that ran beside it.
// The one exception is `eager`, which stays tokbench's own LibTorch step (its baseline);
// PyTorch's eager litgpt is `python-eager` (docs/reference-benchmark.md, "Compiler names").
// The names come from the executor table (executor_registry.hpp); the thunder family's rules
// are here. Plain C++: resolve.cpp and the sweep's matrix both check names with it.
#pragma once

#include <string>
#include <vector>

#include "run/executor_registry.hpp"

namespace tokbench::run {

// How thunder takes the model: thunder.jit, or thunder as torch.compile's backend (ThunderFX,
// thunder.dynamo.ThunderCompiler), which the reference's names select with `dynamo`.
enum class ThunderFrontEnd { jit, dynamo };
const char* to_string(ThunderFrontEnd front_end);  // "jit", "dynamo"

// The two words of the reference's compiler names that are also executor names: `thunder`
// (python-thunder's family: every name of it has this part) and `inductor` (python-inductor's
// alias, and a part of thunder names, thunder_inductor).
inline constexpr char kThunderWord[] = "thunder";
inline constexpr char kInductorWord[] = "inductor";

// thunder's executors that a name puts ahead of thunder's defaults, highest priority first,
// spelled as the Python step takes them (python/tokbench_python_step.py, --thunder-executors).
inline constexpr const char* kThunderTorchCompile = "torch_compile";          // `inductor`
inline constexpr const char* kThunderTorchCompileCat = "torch_compile_cat";   // `inductor_cat`
inline constexpr const char* kThunderTransformerEngine = "transformer_engine";  // `transformerengine`
inline constexpr const char* kThunderCudnn = "cudnn";                         // `cudnn`

struct CompilerChoice {
  std::string compiler;  // the name as the user passed it: the JSON `compiler`
  Executor executor = Executor::eager;
  // python_thunder only.
  ThunderFrontEnd thunder_front_end = ThunderFrontEnd::jit;
  std::vector<std::string> thunder_executors;
  // The thunder executors of the choice that run on CUDA only (transformer_engine, cudnn).
  std::vector<std::string> cuda_only_executors() const;
};

// The choice for a name, or std::invalid_argument with one line naming the value and the valid
// names. Valid: the executor table's names (eager, fused, python-eager, python-inductor,
// python-thunder) and aliases (the reference's `inductor`), and its families: any name made of
// `thunder` and the parts inductor, inductor_cat, cat, transformerengine, cudnn, jit, dynamo
// joined by `_`.
CompilerChoice choose_compiler(const std::string& name);

// The thunder family's rule (python-thunder's entry): a name made of `thunder` and those parts.
CompilerChoice choose_thunder_name(const std::string& name);

}  // namespace tokbench::run
