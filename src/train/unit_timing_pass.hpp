// The per-unit timing pass: a few more iterations of a step after the measured window, as
// --profile's, in which the forward, backward and optimizer time of the embedding, of each
// transformer block and of the head are marked (unit_timing_hooks.hpp) on the step's clock
// (unit_clock.hpp). Nothing in the timed window changes: the pass's iterations are neither
// recorded nor timed there, and it starts after the loop has read its memory peaks. Its
// iterations do train (the optimizer steps), like any iteration.
#pragma once

#include <c10/core/Device.h>

#include <cstdint>
#include <functional>
#include <optional>

#include "train/token_data.hpp"
#include "train/train_step.hpp"
#include "train/unit_timings.hpp"

namespace tokbench::train {

// Runs `iterations` iterations of `grad_accum` micro-batches of `step` over `data`, marking
// each unit. `stop` is asked at every iteration start (a multi-rank run's agreed decision);
// when it says stop, the pass ends without timings (nullopt). Failures (an out-of-memory error,
// a failed collective) propagate as exceptions; the step's forward-end callback and the
// model's hooks are put back either way.
std::optional<UnitTimings> measure_unit_timings(TrainStep& step, TokenBatcher& data, const c10::Device& device,
                                                int64_t grad_accum, int64_t iterations,
                                                const std::function<bool()>& stop);

}  // namespace tokbench::train
