// The context block every result carries (docs/PERFORMANCE.md, "The contract": every result
// describes itself): tokbench version and git revision, LibTorch version, build type, host,
// RFC 3339 time. Device names come from the RunPlan.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "machine/environment_keys.hpp"

namespace tokbench::machine {

struct Environment {
  std::string tokbench_version;
  std::string git_revision;
  std::string libtorch_version;
  std::string build_type;  // "release" or "debug (assertions on)"
  std::string host;
  std::string time_rfc3339;
  // Logical CPUs this process may run on (its affinity mask): what ranks sharing the machine
  // divide among themselves, which `tokbench predict` needs to scale CPU compute.
  int cpu_cores = 0;
  // --executor python-*: the child's interpreter and versions (empty otherwise).
  std::string python_executable;
  std::string python_version;
  std::string python_torch_version;
  std::string litgpt_version;
  std::string thunder_version;  // python-thunder only
  std::string thunder_executors;  // python-thunder only: the executors thunder was given, comma-separated
};

Environment capture_environment();
// The `environment` object of a result, as `tokbench run`'s JSON writes it (its device names
// given: the CPU model, or the GPU), for other results that describe themselves the same way
// (`tokbench comm`'s). The Python executors' keys are left to the run's record.
nlohmann::ordered_json environment_record(const Environment& env, const std::vector<std::string>& devices);
bool is_debug_build();
std::string rfc3339_now();

}  // namespace tokbench::machine
