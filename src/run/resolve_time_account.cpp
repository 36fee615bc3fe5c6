// --time-account-iters and TOKBENCH_TEST_HOST_DELAY_MS (resolve_time_account.hpp).
#include "run/resolve_time_account.hpp"

#include <fmt/format.h>

#include <charconv>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>

#include "usage/usage_error.hpp"

namespace tokbench::run {
namespace {

using usage::refuse;

constexpr int64_t kDefaultTimeAccountIters = 2;
constexpr int64_t kMaxTestHostDelayMs = 60'000;

// A whole number in [0, max] filling `text`, or nullopt.
std::optional<int64_t> whole_number(std::string_view text, int64_t max) {
  int64_t value = -1;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || value < 0 || value > max) return std::nullopt;
  return value;
}

// "MS" delays every rank; "MS@RANK" only that rank (a straggler, whose time the other ranks
// spend waiting for it in their collectives).
double test_host_delay_seconds(const RunPlan& plan) {
  const char* text = std::getenv(kTestHostDelayEnv);
  if (text == nullptr || *text == '\0') return 0;
  const std::string value(text);
  const std::size_t at = value.find('@');
  const auto ms = whole_number(std::string_view(value).substr(0, at), kMaxTestHostDelayMs);
  std::optional<int64_t> rank;
  if (at != std::string::npos) rank = whole_number(std::string_view(value).substr(at + 1), plan.world_size() - 1);
  if (!ms || (at != std::string::npos && !rank))
    refuse(fmt::format("{} '{}' is not valid; valid: a whole number of milliseconds 0..{}, optionally followed by "
                       "@RANK with RANK 0..{} to delay that rank only (a test hook: the host sleeps this long at "
                       "every iteration's start)",
                       kTestHostDelayEnv, usage::printable(value), kMaxTestHostDelayMs, plan.world_size() - 1));
  if (rank && *rank != plan.dist.env.rank) return 0;
  return static_cast<double>(*ms) / 1e3;
}

}  // namespace

void resolve_time_account(const RunOptions& o, RunPlan& plan) {
  // Built for every executor, device and strategy: tokbench's steps time their waits for
  // collectives, the Python executors' waits are read from the profiler's events (their
  // collectives' operators, and the loop's gaps while Gloo runs one: account/profiled_pass.hpp),
  // and on a CUDA device every executor's pass reads the device's timeline
  // (account/device_timeline.hpp).
  plan.time_account_iters = o.time_account_iters.value_or(kDefaultTimeAccountIters);  // a given one: check_diagnostics
  plan.test_host_delay_seconds = test_host_delay_seconds(plan);
}

}  // namespace tokbench::run
