// The bounds of a run's numeric options and the parse-time checks of numbers that every
// command's options use (run, comm, env, info). Torch-free, so any layer may use them; the
// option tables of the sections (config/*.cpp) attach them to their fields.
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <string>

namespace tokbench::config {

// Upper bounds on values that are absurd for a benchmark: past them a run would not end in
// any useful time, would allocate its own size before failing, or its counts would stop
// being exact. The rows' bounds (check_fields) and resolve.cpp refuse them (exit 2) with one line;
// docs/run.md, "Bounds".
namespace limits {
// Every iteration's time and loss are kept and written to the JSON (~60 bytes each).
inline constexpr int64_t kMaxIters = 1'000'000;
// Micro-batches per device per iteration (GA = G / (B·W)); a stop request is honoured
// between micro-batches, but an iteration of more than this is not a benchmark.
inline constexpr int64_t kMaxGradAccum = 1'000'000;
// --n-layers: the deepest litgpt config has 126 layers; per-layer lists are built from it.
inline constexpr int64_t kMaxLayers = 100'000;
inline constexpr int kMaxThreads = 1024;  // --num-threads
inline constexpr int64_t kMaxLogEvery = kMaxIters;
// Per device; the fastest datasheet peak is a few thousand TFLOP/s.
inline constexpr double kMaxPeakTflops = 1e6;
// max_iters·G·T: token counts are turned into doubles for the rates, exact up to 2^53.
inline constexpr int64_t kMaxTokensPerRun = int64_t{1} << 53;
inline constexpr int64_t kMaxRanksPerNode = 4096;  // --nproc-per-node
inline constexpr int64_t kMaxNodes = 4096;         // --nnodes
// --profile-iters: a trace of every operator grows by megabytes per iteration.
inline constexpr int64_t kMaxProfileIters = 100;
// --unit-timing-iters: each is a full iteration run after the window, on top of the run's.
inline constexpr int64_t kMaxUnitTimingIters = 100;
// --time-account-iters: each is a full iteration under the profiler, whose events are kept in memory.
inline constexpr int64_t kMaxTimeAccountIters = 100;
}  // namespace limits

// Parse-time checks of numeric values. CLI11 alone would turn "1e30" into INT64_MAX (strtoll
// saturates), read "010" as octal, "-1" as 2^64-1 for an unsigned option and "" as 0; these
// accept only a plain decimal integer that fits T (rewritten to canonical decimal before
// CLI11 converts it) or, for real numbers, a finite one. A refusal reads
// "--option: 'VALUE' is not valid; valid: <valid>" (one line; exit 2). Attach them with
// Option::transform: Option::check would make them non-modifying, and CLI11 would then
// convert the original text ("010" as 8).
template <typename T>
CLI::Validator whole_number(const std::string& valid);  // T: int, int64_t or uint64_t
CLI::Validator finite_number(const std::string& valid);

}  // namespace tokbench::config
