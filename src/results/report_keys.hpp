// The keys of the JSON report every command's `--format json` writes (results/report_json.cpp):
// {"context": {...}, "runs": [record, ...]}. Its readers (tokbench explain, predict's --from and
// --probes-from) tell it from a single record by these; each command's context counts its runs
// under the same word. A header of constants only.
#pragma once

namespace tokbench::results::report_key {

inline constexpr char context[] = "context";
inline constexpr char runs[] = "runs";

}  // namespace tokbench::results::report_key
