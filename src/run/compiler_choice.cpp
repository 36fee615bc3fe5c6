// compiler_choice.hpp. The thunder names follow benchmark_litgpt.py, which reads them by
// substring; here each `_`-separated part must be one the reference acts on, so that a typo
// (`thunder_inducter`) is refused instead of running plain thunder under the typo's name.
#include "run/compiler_choice.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <iterator>
#include <stdexcept>

namespace tokbench::run {
namespace {

[[noreturn]] void refuse(const std::string& name, const std::string& why) {
  throw std::invalid_argument(fmt::format("--compile '{}' is not valid{}; valid: {}", name, why, valid_compiler_names()));
}

std::vector<std::string> split_parts(const std::string& name) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  for (std::size_t end; (end = name.find('_', start)) != std::string::npos; start = end + 1)
    parts.push_back(name.substr(start, end - start));
  parts.push_back(name.substr(start));
  return parts;
}

}  // namespace

CompilerChoice choose_thunder_name(const std::string& name) {
  CompilerChoice c{name, Executor::python_thunder};
  bool inductor = false, inductor_cat = false, transformer_engine = false, cudnn = false, jit = false,
       dynamo = false, thunder = false;
  const std::vector<std::string> parts = split_parts(name);
  for (std::size_t i = 0; i < parts.size(); ++i) {
    const std::string& p = parts[i];
    bool* seen = p == kThunderWord          ? &thunder
                 : p == kInductorWord       ? (i + 1 < parts.size() && parts[i + 1] == "cat" ? &inductor_cat : &inductor)
                 : p == "transformerengine" ? &transformer_engine
                 : p == "cudnn"             ? &cudnn
                 : p == "jit"               ? &jit
                 : p == "dynamo"            ? &dynamo
                                            : nullptr;
    if (seen == &inductor_cat) ++i;  // "cat" belongs to "inductor_cat"
    if (seen == nullptr) refuse(name, fmt::format(" ('{}' is not a part the reference's thunder names take)", p));
    if (*seen) refuse(name, fmt::format(" ('{}' appears twice)", p));
    *seen = true;
  }
  if (!thunder) refuse(name, "");
  if (jit && dynamo) refuse(name, " (jit and dynamo are two ways to apply thunder: pick one)");
  if (inductor && inductor_cat) refuse(name, " (inductor and inductor_cat both pick thunder's torch.compile executor)");
  // benchmark_litgpt.py's elif chain would drop TransformerEngine here without a word.
  if ((inductor || inductor_cat) && transformer_engine)
    refuse(name, " (the reference applies only one of inductor and transformerengine)");
  c.thunder_front_end = dynamo ? ThunderFrontEnd::dynamo : ThunderFrontEnd::jit;
  // Highest priority first, as the seed's benchmark inserted them at the front of the list.
  if (transformer_engine) c.thunder_executors.push_back(kThunderTransformerEngine);
  if (cudnn) c.thunder_executors.push_back(kThunderCudnn);
  if (inductor_cat) c.thunder_executors.push_back(kThunderTorchCompileCat);
  if (inductor) c.thunder_executors.push_back(kThunderTorchCompile);
  return c;
}

const char* to_string(ThunderFrontEnd front_end) { return front_end == ThunderFrontEnd::jit ? "jit" : "dynamo"; }

std::vector<std::string> CompilerChoice::cuda_only_executors() const {
  std::vector<std::string> out;
  std::copy_if(thunder_executors.begin(), thunder_executors.end(), std::back_inserter(out),
               [](const std::string& e) { return e == kThunderTransformerEngine || e == kThunderCudnn; });
  return out;
}

CompilerChoice choose_compiler(const std::string& name) {
  for (const ExecutorEntry& e : executor_entries()) {
    if (name == e.name) return CompilerChoice{name, e.id};
    for (const std::string& alias : e.aliases)
      if (name == alias) return CompilerChoice{name, e.id};
  }
  for (const ExecutorEntry& e : executor_entries())
    if (e.family_word != nullptr && name.find(e.family_word) != std::string::npos) return e.choose_family(name);
  refuse(name, "");
}

}  // namespace tokbench::run
