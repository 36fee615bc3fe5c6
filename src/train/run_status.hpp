// How a run ended, and the process exit code of each ending: the one table of both (the
// `status` JSON key, the run's exit code, the docs' list). Kept free of LibTorch so the
// torch-free parts of the bench and sweep layers can name a run's status.
#pragma once

#include <string>

namespace tokbench::train {

enum class RunStatus {
  ok,           // every iteration ran; exit 0
  oom,          // out of memory on a device (any rank); exit 3
  nan,          // a non-finite loss; exit 4
  interrupted,  // SIGINT/SIGTERM; exit 5
  timeout,      // a collective or the run exceeded its time limit; exit 6
  rank_failed,  // another rank died or its connection broke; exit 7
  error,        // anything else; exit 1
  invalid,      // a configuration rejected before work (usage); exit 2
};

// Process exit codes outside the status table.
inline constexpr int kExitOk = 0;
inline constexpr int kExitError = 1;
inline constexpr int kExitUsage = 2;

const char* to_string(RunStatus status);  // "ok", "oom", "nan", ... as the JSON `status`
// The status a to_string text names; error for any other text (a peer's record is input).
RunStatus run_status_from_string(const std::string& text);
int exit_code(RunStatus status);

// The status a failure's message implies: a collective that timed out (a peer stopped
// answering) -> timeout; a connection a peer closed or reset -> rank_failed; else error.
RunStatus status_of_failure(const std::string& message);

}  // namespace tokbench::train
