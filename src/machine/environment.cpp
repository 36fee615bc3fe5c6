// Environment capture. TOKBENCH_BENCH_VERSION comes from CMake for this file only, the revision
// from the build-time git_revision.hpp; torch/version.h is a tiny header (no torch/torch.h here).
#include "machine/environment.hpp"
#include "git_revision.hpp"

#include <sched.h>
#include <torch/version.h>
#include <unistd.h>

#include <ctime>

#ifndef TOKBENCH_BENCH_VERSION
#define TOKBENCH_BENCH_VERSION "unknown"
#endif

namespace tokbench::machine {

bool is_debug_build() {
#ifndef NDEBUG
  return true;
#else
  return false;
#endif
}

std::string rfc3339_now() {
  std::time_t now = std::time(nullptr);
  std::tm local{};
  localtime_r(&now, &local);
  char buffer[40];
  std::strftime(buffer, sizeof buffer, "%Y-%m-%dT%H:%M:%S%z", &local);
  std::string text(buffer);
  // strftime's %z is "+0100"; RFC 3339 wants "+01:00".
  if (text.size() >= 5) text.insert(text.size() - 2, ":");
  return text;
}

Environment capture_environment() {
  Environment env;
  env.tokbench_version = TOKBENCH_BENCH_VERSION;
  env.git_revision = git_revision();
  env.libtorch_version = TORCH_VERSION;
  env.build_type = is_debug_build() ? "debug (assertions on)" : "release";
  char host[256] = {0};
  if (gethostname(host, sizeof host - 1) == 0) env.host = host;
  env.time_rfc3339 = rfc3339_now();
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  env.cpu_cores = sched_getaffinity(0, sizeof allowed, &allowed) == 0
                      ? CPU_COUNT(&allowed)
                      : static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN));
  return env;
}

nlohmann::ordered_json environment_record(const Environment& env, const std::vector<std::string>& devices) {
  namespace k = environment_key;
  return {{k::tokbench_version, env.tokbench_version}, {k::git_revision, env.git_revision},
          {k::libtorch_version, env.libtorch_version}, {k::build_type, env.build_type},
          {k::host, env.host},                         {k::time, env.time_rfc3339},
          {k::cpu_cores, env.cpu_cores},               {k::devices, devices}};
}

}  // namespace tokbench::machine
