// The keys of the calibration cache (calibration.json in tokbench's cache folder), which
// `tokbench env --calibrate` writes and every run reads for its CPU peaks: both in
// machine/calibration_cache.cpp, which names them by these. A header of constants only.
#pragma once

namespace tokbench::machine::calibration_key {

inline constexpr char schema[] = "schema";
inline constexpr char entries[] = "entries";
// An entry: the machine it was measured on, when, and its peaks.
inline constexpr char cpu_model[] = "cpu_model";
inline constexpr char logical_cpus[] = "logical_cpus";
inline constexpr char threads[] = "threads";
inline constexpr char torch_version[] = "torch_version";
inline constexpr char measured_at[] = "measured_at";
inline constexpr char peaks[] = "peaks";
// A peak.
inline constexpr char dtype[] = "dtype";
inline constexpr char flops_per_s[] = "flops_per_s";
inline constexpr char kernel[] = "kernel";
inline constexpr char shape[] = "shape";

}  // namespace tokbench::machine::calibration_key
