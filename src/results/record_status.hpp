// The statuses of a result record whose figures are to be read: a run that finished ("ok"), and
// a prediction (`tokbench predict`: "predicted"), which holds the same figures, modelled rather
// than measured. Every other status (oom, nan, error, timeout, invalid, ...) is a run that gave
// no figures, shown by its status. Torch-free.
#pragma once

#include <string_view>

namespace tokbench::results {

inline constexpr std::string_view kStatusOk = "ok";
inline constexpr std::string_view kStatusPredicted = "predicted";
// The statuses the sweep writes itself, in the rows of configurations that could not give a
// record: refused before they ran (invalid), or ended without one (error; under Slurm also the
// job's time limit or memory). tokbench run's own words are train::RunStatus's
// (train/run_status.cpp), the same words.
inline constexpr std::string_view kStatusInvalid = "invalid";
inline constexpr std::string_view kStatusError = "error";
inline constexpr std::string_view kStatusTimeout = "timeout";
inline constexpr std::string_view kStatusOom = "oom";

// Whether a record of `status` holds figures tables show as numbers.
inline bool holds_figures(std::string_view status) { return status == kStatusOk || status == kStatusPredicted; }

// The exit code of a `tokbench run` that could not write its record (--json-path: the disk full,
// the folder gone), whatever the run's status was, and of a `tokbench sweep` that could not
// write its own files. It says "tokbench's output failed", not "the configuration failed": a
// sweep records nothing for that configuration, stops, and runs it again when started again
// (docs/run.md and docs/sweep.md, exit codes). Outside the status table's codes 0-7.
inline constexpr int kExitRecordNotWritten = 8;

// The exit code of a tokbench that could not start its runtime: the working directory no longer
// exists (LibTorch's oneMKL calls getcwd() when it loads and, failing, ended the process with
// exit 2, the usage code), or a library ended the process before tokbench finished. Not the
// configuration's fault either: a sweep stops and the same command resumes, as for 8.
inline constexpr int kExitRuntimeUnavailable = 9;

}  // namespace tokbench::results
