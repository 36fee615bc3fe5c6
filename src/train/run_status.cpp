// The status table of run_status.hpp.
#include "train/run_status.hpp"

namespace tokbench::train {

const char* to_string(RunStatus status) {
  switch (status) {
    case RunStatus::ok: return "ok";
    case RunStatus::oom: return "oom";
    case RunStatus::nan: return "nan";
    case RunStatus::interrupted: return "interrupted";
    case RunStatus::timeout: return "timeout";
    case RunStatus::rank_failed: return "rank_failed";
    case RunStatus::error: return "error";
    case RunStatus::invalid: return "invalid";
  }
  return "unknown";
}

RunStatus run_status_from_string(const std::string& text) {
  for (RunStatus s : {RunStatus::ok, RunStatus::oom, RunStatus::nan, RunStatus::interrupted, RunStatus::timeout,
                      RunStatus::rank_failed, RunStatus::error, RunStatus::invalid})
    if (text == to_string(s)) return s;
  return RunStatus::error;
}

int exit_code(RunStatus status) {
  switch (status) {
    case RunStatus::ok: return kExitOk;
    case RunStatus::oom: return 3;
    case RunStatus::nan: return 4;
    case RunStatus::interrupted: return 5;
    case RunStatus::timeout: return 6;
    case RunStatus::rank_failed: return 7;
    case RunStatus::error: return kExitError;
    case RunStatus::invalid: return kExitUsage;
  }
  return kExitError;
}

RunStatus status_of_failure(const std::string& message) {
  for (const char* pattern : {"imed out", "Timeout", "timeout"})
    if (message.find(pattern) != std::string::npos) return RunStatus::timeout;
  for (const char* pattern : {"Connection closed", "Connection reset", "Broken pipe", "closed by peer",
                              "NCCL communicator was aborted", "ncclRemoteError"})
    if (message.find(pattern) != std::string::npos) return RunStatus::rank_failed;
  return RunStatus::error;
}

}  // namespace tokbench::train
