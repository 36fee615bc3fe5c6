// The cache of `tokbench env --calibrate`: the dense matmul FLOP/s this CPU reached per dtype,
// kept in one JSON file so `tokbench run` can take a measured peak for CPU MFU instead of
// the clock-based estimate. Torch-free (the measuring is calibrate_peak.cpp's job), so the
// file logic tests without LibTorch's runtime.
//
// A measurement holds only for the machine and the settings it was taken with, so each
// entry is keyed by the CPU model name, the logical CPU count, the intra-op thread count and
// the LibTorch version: a run whose key differs in any of these ignores the entry (another
// thread count reaches another peak; another LibTorch may ship other kernels).
#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "machine/cache_dir.hpp"

namespace tokbench::machine {

struct CalibrationKey {
  std::string cpu_model;
  int logical_cpus = 0;
  int threads = 0;  // intra-op threads (at::get_num_threads) during the measurement
  std::string torch_version;
  bool operator==(const CalibrationKey&) const = default;
};

// This machine's key: detect_cpu()'s model name and logical CPUs, with the given intra-op
// thread count and LibTorch version (callers pass TORCH_VERSION).
CalibrationKey calibration_key_here(int threads, const std::string& torch_version);

// The best rate one dtype reached, and how.
struct MeasuredPeak {
  std::string dtype;          // "fp32", "bf16" (tokbench::to_string(Precision))
  double flops_per_s = 0;
  std::string kernel;         // "at::mm (MKL)", "mkldnn::_linear_pointwise (oneDNN)"
  std::string shape;          // "MxNxK", e.g. "2048x5632x2048"
};

struct CpuCalibration {
  CalibrationKey key;
  std::string measured_at;    // RFC 3339 time of the measurement
  std::vector<MeasuredPeak> peaks;
};

// Where the cache lives: calibration.json in tokbench_cache_dir() ($TOKBENCH_CACHE_DIR,
// else $XDG_CACHE_HOME/tokbench, else $HOME/.cache/tokbench). `getenv` is injectable for tests.
std::filesystem::path calibration_cache_file(const GetEnv& getenv_fn);
std::filesystem::path calibration_cache_file();  // from the process environment

// Every entry of the cache file. A missing file is an empty cache; an unreadable or
// malformed one is too, with `error` (when given) set to one line saying why.
std::vector<CpuCalibration> read_calibrations(const std::filesystem::path& file, std::string* error = nullptr);

// Adds `entry` to the file, replacing an entry with the same key; creates the directory.
// Written atomically (temp file + rename). Throws std::runtime_error naming the file.
void save_calibration(const std::filesystem::path& file, const CpuCalibration& entry);

// The entry for exactly this key, or nullopt.
std::optional<CpuCalibration> find_calibration(const std::vector<CpuCalibration>& entries,
                                               const CalibrationKey& key);

// The peak of `dtype` in an entry, or nullopt when that dtype was not measured.
std::optional<MeasuredPeak> peak_for(const CpuCalibration& entry, const std::string& dtype);

// The MFU source string of a measured peak: "measured by `tokbench env --calibrate` on
// <date>: <kernel> <shape>".
std::string measured_peak_source(const CpuCalibration& entry, const MeasuredPeak& peak);

}  // namespace tokbench::machine
