// The keys of the `environment` object machine::environment_record writes (environment.hpp): the
// run record's environment block and `tokbench comm`'s. Its readers (the result store, predict)
// name them by these, so each key is spelled once. A header of constants only: a layer that reads
// the block includes it without linking the machine library.
#pragma once

namespace tokbench::machine::environment_key {

inline constexpr char tokbench_version[] = "tokbench_version";
inline constexpr char git_revision[] = "git_revision";
inline constexpr char libtorch_version[] = "libtorch_version";
inline constexpr char build_type[] = "build_type";
inline constexpr char host[] = "host";
inline constexpr char time[] = "time";
inline constexpr char cpu_cores[] = "cpu_cores";
inline constexpr char devices[] = "devices";
// The Python executors' interpreter and packages (run/result_json.cpp adds them to a run's block).
inline constexpr char python_version[] = "python_version";
inline constexpr char python_torch_version[] = "python_torch_version";
inline constexpr char litgpt_version[] = "litgpt_version";
inline constexpr char thunder_version[] = "thunder_version";
inline constexpr char python_executable[] = "python_executable";

// The core count's name before cpu_cores (records and comm documents of an older tokbench; read
// only).
inline constexpr char old_cores[] = "cores";

}  // namespace tokbench::machine::environment_key
