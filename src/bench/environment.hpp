// The context block every result carries (docs/PERFORMANCE.md, "The contract": every result
// describes itself): tokbench version and git revision, LibTorch version, build type, host,
// RFC 3339 time. Device names come from the RunPlan.
#pragma once

#include <string>

namespace tokbench::bench {

struct Environment {
  std::string tokbench_version;
  std::string git_revision;
  std::string libtorch_version;
  std::string build_type;  // "release" or "debug (assertions on)"
  std::string host;
  std::string time_rfc3339;
  // --executor python-*: the child's interpreter and versions (empty otherwise).
  std::string python_executable;
  std::string python_version;
  std::string python_torch_version;
  std::string litgpt_version;
  std::string thunder_version;  // python-thunder only
};

Environment capture_environment();
bool is_debug_build();
std::string rfc3339_now();

}  // namespace tokbench::bench
