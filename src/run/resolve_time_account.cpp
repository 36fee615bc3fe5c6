// --time-account-iters and TOKBENCH_TEST_HOST_DELAY_MS (resolve_time_account.hpp).
#include "run/resolve_time_account.hpp"

#include <fmt/format.h>

#include <charconv>
#include <cstdlib>
#include <string>

#include "usage/usage_error.hpp"

namespace tokbench::run {
namespace {

using usage::refuse;

constexpr int64_t kDefaultTimeAccountIters = 2;
constexpr int64_t kMaxTestHostDelayMs = 60'000;

// Why this run has no time account; "" when it can have one.
std::string why_no_time_account(const RunPlan& plan) {
  // Many ranks need no check of their own: tokbench's DDP and FSDP steps time their waits for
  // collectives (the account's exposed communication). The Python executors profile their own
  // pass (python_time_account.hpp) on one rank; their distributed steps (fsdp2's among them) do
  // not time their waits.
  if (is_python(plan.compiler.executor) && plan.world_size() > 1)
    return fmt::format("--compile {} on {} ranks: the Python executors' account is one rank's (their distributed "
                       "steps do not time their waits for collectives; not built yet)",
                       usage::printable(plan.options.compile), plan.world_size());
  // On a CUDA device tokbench's own pass reads the device's timeline (account/device_timeline.hpp);
  // the Python executors' child profiles the host only.
  if (is_python(plan.compiler.executor) && plan.device_kind == DeviceKind::cuda)
    return fmt::format("--compile {} on a CUDA device: the Python executors' CUDA account is not built yet (their "
                       "pass profiles host events only)",
                       usage::printable(plan.options.compile));
  return "";
}

double test_host_delay_seconds() {
  const char* text = std::getenv(kTestHostDelayEnv);
  if (text == nullptr || *text == '\0') return 0;
  const std::string value(text);
  int64_t ms = -1;
  const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), ms);
  if (error != std::errc() || end != value.data() + value.size() || ms < 0 || ms > kMaxTestHostDelayMs)
    refuse(fmt::format("{} '{}' is not valid; valid: a whole number of milliseconds 0..{} (a test hook: the host "
                       "sleeps this long at every iteration's start)",
                       kTestHostDelayEnv, usage::printable(value), kMaxTestHostDelayMs));
  return static_cast<double>(ms) / 1e3;
}

}  // namespace

void resolve_time_account(const RunOptions& o, RunPlan& plan) {
  const std::string why_not = why_no_time_account(plan);
  plan.time_account_iters = o.time_account_iters.value_or(why_not.empty() ? kDefaultTimeAccountIters : 0);
  if (plan.time_account_iters < 0 || plan.time_account_iters > limits::kMaxTimeAccountIters)
    refuse(fmt::format("--time-account-iters {} is not valid; valid: 0..{} (0: no time account)",
                       plan.time_account_iters, limits::kMaxTimeAccountIters));
  if (plan.time_account_iters > 0 && !why_not.empty())
    refuse(fmt::format("--time-account-iters {} is not available here: {}; valid here: --time-account-iters 0",
                       plan.time_account_iters, why_not));
  plan.test_host_delay_seconds = test_host_delay_seconds();
}

}  // namespace tokbench::run
