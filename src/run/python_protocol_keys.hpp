// The keys of the Python step's line protocol: the JSON objects python/tokbench_python_step.py
// writes to its stdout, one per line (another language: it spells them itself), and
// python_executor.cpp and python_time_account.cpp read here; each line's `event` is one of the
// event names below.
#pragma once

namespace tokbench::run::python_protocol_event {

inline constexpr char unavailable[] = "unavailable";
inline constexpr char ready[] = "ready";
inline constexpr char iteration[] = "iteration";
inline constexpr char time_account[] = "time_account";
inline constexpr char result[] = "result";

}  // namespace tokbench::run::python_protocol_event

namespace tokbench::run::python_protocol_key {

inline constexpr char event[] = "event";
// unavailable (error: also time_account's, when its pass failed)
inline constexpr char error[] = "error";
inline constexpr char executor[] = "executor";
// ready
inline constexpr char python_version[] = "python_version";
inline constexpr char torch_version[] = "torch_version";
inline constexpr char litgpt_version[] = "litgpt_version";
inline constexpr char thunder_version[] = "thunder_version";
inline constexpr char thunder_executors[] = "thunder_executors";
inline constexpr char num_threads[] = "num_threads";
// iteration
inline constexpr char index[] = "index";
inline constexpr char warmup[] = "warmup";
inline constexpr char seconds[] = "seconds";
inline constexpr char loss[] = "loss";
inline constexpr char end_time[] = "end_time";
inline constexpr char real_tokens[] = "real_tokens";
// time_account (python_time_account.hpp says what each holds)
inline constexpr char clock_seconds[] = "clock_seconds";
inline constexpr char names[] = "names";
inline constexpr char shapes[] = "shapes";
inline constexpr char events[] = "events";
inline constexpr char launches[] = "launches";
inline constexpr char device_events[] = "device_events";
// result
inline constexpr char status[] = "status";
inline constexpr char message[] = "message";
inline constexpr char measured_window_seconds[] = "measured_window_seconds";
inline constexpr char peak_rss_bytes[] = "peak_rss_bytes";
inline constexpr char profile_message[] = "profile_message";
inline constexpr char memory_snapshot_message[] = "memory_snapshot_message";
inline constexpr char memory_snapshot_written[] = "memory_snapshot_written";
inline constexpr char attention_kernel[] = "attention_kernel";
inline constexpr char allocated_peak_bytes[] = "allocated_peak_bytes";
inline constexpr char reserved_peak_bytes[] = "reserved_peak_bytes";

}  // namespace tokbench::run::python_protocol_key
