// The time account of a Python executor's run (docs/time-account.md, "The Python executors"):
// the step script profiles its own extra iterations under torch.profiler and sends the events
// (python/tokbench_python_step.py, the "time_account" line); here they become the same
// account::ProfiledEvent records tokbench's own pass makes, and go through the same rules and
// attribution (account::attribute_events), so every executor is accounted for alike.
// Torch-free: the events arrive as JSON.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <variant>

#include "train/profiled_time_account.hpp"

namespace tokbench::run {

// The "time_account" line's fields: {"clock_seconds": s, "names": [...], "shapes": [...],
// "events": [[name, start_ns, end_ns, thread, sequence_nr, flags, shapes or -1], ...]}, flags
// the sum of 1 (an autograd node), 2 (a record_function range) and 4 (an asynchronous event: a
// collective on Gloo's threads, which says when the loop's gaps are waits); on a CUDA device
// also "launches" ([correlation_id, start_ns, thread] per runtime or driver call) and
// "device_events" ([name, start_ns, end_ns, stream, correlation_id] per kernel, copy or fill of
// the run's device), read as tokbench's own pass reads the device's timeline (source
// "torch_profiler_cuda"); or {"error": why}. Returns the attributed pass, or why there is none (the child's error, or
// a line that does not read as the protocol says).
std::variant<train::ProfiledTimeAccount, std::string> read_python_time_account(const nlohmann::json& line);

}  // namespace tokbench::run
