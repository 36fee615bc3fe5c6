// The calibration cache of `tokbench env --calibrate`: entries round-trip through the file,
// one key's entry replaces only itself, and a run takes a measured peak only when the key
// (CPU model, logical CPUs, threads, LibTorch version) is exactly its own.
#include <gtest/gtest.h>
#include <torch/version.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include "run/run_options.hpp"
#include "machine/calibration_cache.hpp"
#include "machine/machine_info.hpp"
#include "run/resolve.hpp"
#include "tokbench/throughput.hpp"

namespace tokbench::run {
namespace {

struct TempDir {
  std::filesystem::path path;
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "tokbench-calib-XXXXXX").string();
    path = ::mkdtemp(pattern.data());
  }
  ~TempDir() { std::filesystem::remove_all(path); }
};

machine::CpuCalibration sample(int threads, double fp32_flops) {
  machine::CpuCalibration c;
  c.key = machine::CalibrationKey{"Test CPU 9000", 8, threads, "2.11.0"};
  c.measured_at = "2026-11-30T12:00:00+00:00";
  c.peaks = {machine::MeasuredPeak{"fp32", fp32_flops, "mkldnn::_linear_pointwise (oneDNN)", "2048x2048x5632"},
             machine::MeasuredPeak{"bf16", 4 * fp32_flops, "at::mm", "2048x2048x2048"}};
  return c;
}

TEST(CalibrationCache, FileLocationFollowsTheEnvironment) {
  std::map<std::string, std::string> env{{"HOME", "/home/u"}};
  auto lookup = [&](const char* name) -> const char* {
    auto it = env.find(name);
    return it == env.end() ? nullptr : it->second.c_str();
  };
  EXPECT_EQ(machine::calibration_cache_file(lookup), "/home/u/.cache/tokbench/calibration.json");
  env["XDG_CACHE_HOME"] = "/xdg";
  EXPECT_EQ(machine::calibration_cache_file(lookup), "/xdg/tokbench/calibration.json");
  env["TOKBENCH_CACHE_DIR"] = "/own";
  EXPECT_EQ(machine::calibration_cache_file(lookup), "/own/calibration.json");
}

TEST(CalibrationCache, RoundTripsAndReplacesOnlyTheSameKey) {
  TempDir dir;
  const auto file = dir.path / "sub" / "calibration.json";
  EXPECT_TRUE(machine::read_calibrations(file).empty());  // no file: an empty cache
  machine::save_calibration(file, sample(4, 1e11));
  machine::save_calibration(file, sample(8, 2e11));
  machine::save_calibration(file, sample(4, 1.5e11));  // replaces the 4-thread entry
  std::string error;
  const auto entries = machine::read_calibrations(file, &error);
  EXPECT_EQ(error, "");
  ASSERT_EQ(entries.size(), 2u);
  const auto four = machine::find_calibration(entries, sample(4, 0).key);
  ASSERT_TRUE(four.has_value());
  EXPECT_EQ(four->measured_at, "2026-11-30T12:00:00+00:00");
  ASSERT_EQ(four->peaks.size(), 2u);
  EXPECT_DOUBLE_EQ(four->peaks[0].flops_per_s, 1.5e11);
  EXPECT_EQ(four->peaks[0].kernel, "mkldnn::_linear_pointwise (oneDNN)");
  EXPECT_EQ(four->peaks[0].shape, "2048x2048x5632");
  EXPECT_DOUBLE_EQ(machine::peak_for(*four, "bf16")->flops_per_s, 6e11);
  EXPECT_FALSE(machine::peak_for(*four, "fp16").has_value());
  EXPECT_EQ(machine::measured_peak_source(*four, four->peaks[0]),
            "measured by `tokbench env --calibrate` on 2026-11-30: mkldnn::_linear_pointwise (oneDNN) 2048x2048x5632");
}

TEST(CalibrationCache, AnyKeyDifferenceFindsNothing) {
  const std::vector<machine::CpuCalibration> entries{sample(4, 1e11)};
  machine::CalibrationKey key = sample(4, 0).key;
  EXPECT_TRUE(machine::find_calibration(entries, key).has_value());
  for (auto change : {+[](machine::CalibrationKey& k) { k.threads = 3; }, +[](machine::CalibrationKey& k) { k.cpu_model = "Other CPU"; },
                      +[](machine::CalibrationKey& k) { k.logical_cpus = 16; }, +[](machine::CalibrationKey& k) { k.torch_version = "2.10.0"; }}) {
    machine::CalibrationKey other = key;
    change(other);
    EXPECT_FALSE(machine::find_calibration(entries, other).has_value());
  }
}

TEST(CalibrationCache, MalformedFileIsAnEmptyCacheWithOneLineWhy) {
  TempDir dir;
  const auto file = dir.path / "calibration.json";
  std::ofstream(file) << "{not json";
  std::string error;
  EXPECT_TRUE(machine::read_calibrations(file, &error).empty());
  EXPECT_NE(error.find("is not a calibration cache"), std::string::npos) << error;
  machine::save_calibration(file, sample(4, 1e11));  // a malformed file is replaced
  EXPECT_EQ(machine::read_calibrations(file).size(), 1u);
}

// resolve: the measured peak for this machine's key at the run's thread count, else the
// estimate (with the hint); the key's CPU is the real one (detect_cpu), as in a real run.
TEST(CalibrationCache, ResolveTakesTheMeasuredPeakOnlyForItsKey) {
  const CpuInfo cpu = detect_cpu();
  machine::CpuCalibration here = sample(3, 1.25e11);
  here.key = machine::CalibrationKey{cpu.model, cpu.logical_cpus, 3, TORCH_VERSION};
  machine::MachineInfo m;
  m.cuda_status = "no CUDA driver";
  m.mem_total_bytes = m.mem_available_bytes = 16'000'000'000;
  m.cpu_model = cpu.model;
  m.cpu_calibrations = {here};
  m.default_threads = 3;
  RunOptions o;
  o.seq_len = 32;
  o.max_iters = 6;
  o.warmup_iters = 2;
  o.device = "cpu";
  RunPlan p = resolve_run(o, m);
  ASSERT_TRUE(p.peak.has_value());
  EXPECT_DOUBLE_EQ(p.peak->flops_per_s, 1.25e11);
  EXPECT_FALSE(p.peak->estimate);
  EXPECT_EQ(p.peak->source.rfind("measured by `tokbench env --calibrate` on 2026-11-30", 0), 0u) << p.peak->source;

  o.num_threads = 2;  // another thread count: not this calibration
  p = resolve_run(o, m);
  if (p.peak) {  // the estimate exists where /proc/cpuinfo names a known vector ISA
    EXPECT_TRUE(p.peak->estimate);
    EXPECT_NE(p.peak->source.find("tokbench env --calibrate --num-threads 2"), std::string::npos) << p.peak->source;
  }
  o.num_threads = 3;
  m.cpu_calibrations[0].key.cpu_model = "Other CPU";
  p = resolve_run(o, m);
  EXPECT_TRUE(!p.peak || p.peak->estimate);
}

}  // namespace
}  // namespace tokbench::run
