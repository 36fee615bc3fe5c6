// The time account's profiled pass (docs/time-account.md): a few more iterations of a step after
// the measured window, run under LibTorch's Kineto profiler (host operators with their input
// shapes, as --profile records them), whose events the account layer attributes to categories
// (account/profiled_pass.hpp). Each iteration is one named range, kIteration, from the end of
// the previous one to the end of its own synchronisation, as the timed loop's iterations run;
// the batch is drawn inside kData. Nothing in the timed window changes: the pass runs after the
// loop has read its memory peaks, and its iterations are neither recorded nor timed there. They
// do train (the optimizer steps), like any iteration.
#pragma once

#include <c10/core/Device.h>

#include <cstdint>
#include <functional>
#include <optional>

#include "train/profiled_time_account.hpp"
#include "train/token_data.hpp"
#include "train/train_step.hpp"

namespace tokbench::train {

// Runs `iterations` iterations of `grad_accum` micro-batches of `step` under the profiler.
// `stop` is asked at every iteration start; when it says stop the pass ends without an account
// (nullopt). `host_delay_seconds` (a test hook, LoopOptions) sleeps at each iteration's start, as
// the timed loop does. Failures propagate as exceptions; the profiler is stopped either way.
std::optional<ProfiledTimeAccount> profile_time_account(TrainStep& step, TokenBatcher& data, const c10::Device& device,
                                                        int64_t grad_accum, int64_t iterations,
                                                        const std::function<bool()>& stop,
                                                        double host_delay_seconds = 0);

}  // namespace tokbench::train
