// Diagnostics section: the passes and dumps after (or around) the measured window — the Chrome
// trace, the memory snapshot, thunder's traces, the unit timings, the time account — and the
// testing aid that caps CPU memory. Read by run/resolve.cpp and run/resolve_time_account.cpp
// into the train layer's passes (train/profile_trace.hpp, train/unit_timing_pass.hpp,
// train/time_account_pass.hpp) and its counting allocator.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "config/field.hpp"

namespace tokbench::config {

struct DiagnosticsSection {
  // Chrome trace of profile_iters iterations run after the measured window (train/profile_trace.hpp).
  std::string profile_path;
  std::optional<int64_t> profile_iters;  // unset: 3 with --profile
  // The reference's --dump_memory_snapshot: the loop's allocation history in PyTorch's format.
  bool dump_memory_snapshot = false;
  bool dump_thunder_traces = false;  // the reference's: thunder's last traces, printed
  // Iterations of the per-unit timing pass after the measured window (train/unit_timing_pass.hpp):
  // the record's unit_timings. Unset: 2 for tokbench's executors, 0 (none) for the Python ones.
  std::optional<int64_t> unit_timing_iters;
  // Iterations of the time account's profiled pass after the unit timings
  // (train/time_account_pass.hpp): the record's time_account. Unset: 2 where the account is
  // available (on the CPU: tokbench's executors on one rank or many, the Python executors on one
  // rank, which profile their own pass), else 0 (resolve_time_account.hpp).
  std::optional<int64_t> time_account_iters;
  // Testing aid: cap the CPU counting allocator (MB, 10^6 bytes) to drive the OOM path.
  std::optional<int64_t> cpu_memory_cap_mb;
  std::optional<int64_t> cpu_memory_cap_rank;  // the cap applies to this rank only (multi-rank tests)
};

const std::vector<Field>& diagnostics_fields();
// The section's checks of its options together (--profile-iters needs --profile, and is
// bounded, as --time-account-iters is): one line, exit 2 (usage::refuse). Run after the rows' checks (config::check_fields);
// what needs the world size is resolve.cpp's.
void check_diagnostics(const DiagnosticsSection& diagnostics);

}  // namespace tokbench::config
