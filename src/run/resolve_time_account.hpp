// --time-account-iters and the time account's test hook, checked and decided before any work
// (docs/time-account.md). The account is on by default (2 iterations) for every executor
// (tokbench's eager and fused, the Python executors), on the CPU or a CUDA device (whose
// timeline it reads: account/device_timeline.hpp), on one rank or many (DDP, FSDP, fsdp2: every
// rank runs the pass and makes its own account; tokbench's steps time their waits for
// collectives, the Python steps' waits are read from the profiler's events).
//
// TOKBENCH_TEST_HOST_DELAY_MS (a test hook, not an option): milliseconds the host sleeps at the
// start of every iteration, in the timed loop and the account's pass, as an input pipeline would;
// "MS@RANK" delays that rank only, as a straggler. The Python executors get it in their config.
//
// resolve_run calls it after the executor, device, ranks and unit timings are decided.
#pragma once

#include "run/run_options.hpp"
#include "run/run_plan.hpp"

namespace tokbench::run {

inline constexpr const char* kTestHostDelayEnv = "TOKBENCH_TEST_HOST_DELAY_MS";

// Sets plan.time_account_iters and plan.test_host_delay_seconds; throws std::invalid_argument
// (usage::refuse) with one line naming the option, the value and what is valid.
void resolve_time_account(const RunOptions& options, RunPlan& plan);

}  // namespace tokbench::run
