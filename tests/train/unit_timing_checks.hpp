// What every step's per-unit timings must satisfy (train/unit_timings.hpp), shared by the
// train and distributed suites: the structure strictly, the times loosely. A unit's times are
// a few hundred microseconds on these tiny models, so only relations that no scheduling hiccup
// of a shared machine can break are asserted (no ratio between blocks).
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "train/unit_timings.hpp"

namespace tokbench::train::testing {

// embedding, block.0 .. block.{n-1}, head, in that order, each with its parameters; every time
// positive; the record's counts as asked; the units' parameters add up to the model's.
inline void expect_unit_structure(const UnitTimings& t, int64_t n_layer, int64_t grad_accum, int64_t iterations,
                                  int64_t model_parameters, const std::string& what,
                                  const std::string& clock = "host") {
  EXPECT_EQ(t.iterations, iterations) << what;
  EXPECT_EQ(t.clock, clock) << what;
  EXPECT_EQ(t.micro_batches_per_iteration, grad_accum) << what;
  EXPECT_GT(t.iteration_seconds, 0) << what;
  EXPECT_GT(t.optimizer_seconds, 0) << what;
  EXPECT_GE(t.exposed_comm_seconds, 0) << what;
  ASSERT_EQ(t.units.size(), static_cast<std::size_t>(n_layer + 2)) << what;
  int64_t parameters = 0;
  double optimizer_seconds = 0;
  for (std::size_t i = 0; i < t.units.size(); ++i) {
    const UnitTiming& u = t.units[i];
    const std::string name = i == 0 ? "embedding" : i + 1 == t.units.size() ? "head" : "block." + std::to_string(i - 1);
    const std::string kind = i == 0 ? "embedding" : i + 1 == t.units.size() ? "head" : "block";
    EXPECT_EQ(u.name, name) << what;
    EXPECT_EQ(u.kind, kind) << what << " " << name;
    EXPECT_GT(u.parameters, 0) << what << " " << name;
    EXPECT_GT(u.forward_seconds, 0) << what << " " << name;
    EXPECT_GT(u.backward_seconds, 0) << what << " " << name;
    EXPECT_GT(u.optimizer_seconds, 0) << what << " " << name;
    parameters += u.parameters;
    optimizer_seconds += u.optimizer_seconds;
  }
  EXPECT_EQ(parameters, model_parameters) << what;
  EXPECT_NEAR(optimizer_seconds, t.optimizer_seconds, 1e-9 + 1e-9 * t.optimizer_seconds) << what;
  // Blocks of one shape hold the same parameters.
  for (std::size_t i = 2; i + 1 < t.units.size(); ++i) EXPECT_EQ(t.units[i].parameters, t.units[1].parameters) << what;
}

// The units tile the iteration: what they leave out is drawing the micro-batches' tokens, the
// bookkeeping between the marks and the end-of-iteration synchronisation, so their sum is
// below the iteration's wall time (the marks are disjoint intervals inside it; 1.1 leaves room
// for clock reads) and, on one process's CPU run, well above half of it.
inline void expect_units_account_for_the_iteration(const UnitTimings& t, const std::string& what) {
  double sum = t.optimizer_seconds;
  for (const auto& u : t.units)
    sum += (u.forward_seconds + u.backward_seconds) * static_cast<double>(t.micro_batches_per_iteration);
  EXPECT_GE(sum, 0.5 * t.iteration_seconds) << what << ": units " << sum << " s of " << t.iteration_seconds << " s";
  EXPECT_LE(sum, 1.1 * t.iteration_seconds) << what << ": units " << sum << " s of " << t.iteration_seconds << " s";
}

}  // namespace tokbench::train::testing
