// The names of the metrics Throughput::compute() returns (Lightning's ThroughputMonitor names:
// "time", "batches", ..., and "device<separator>batches_per_sec", ...): throughput.cpp writes them
// by these, and run/metrics.cpp reads the rates by them. A header of constants only, private to
// the build (the installed library's consumers read the names Lightning documents).
#pragma once

namespace tokbench::throughput::metric_key {

inline constexpr char time[] = "time";
inline constexpr char batches[] = "batches";
inline constexpr char samples[] = "samples";
inline constexpr char lengths[] = "lengths";
inline constexpr char batches_per_sec[] = "batches_per_sec";
inline constexpr char samples_per_sec[] = "samples_per_sec";
inline constexpr char items_per_sec[] = "items_per_sec";
inline constexpr char flops_per_sec[] = "flops_per_sec";
inline constexpr char mfu[] = "mfu";
// The per-device rates' prefix, before the separator (Throughput's `separator`, "/" by default).
inline constexpr char device[] = "device";

}  // namespace tokbench::throughput::metric_key
