// `tokbench env`'s work (env_report.hpp).
#include "run/env_report.hpp"

#include <ATen/Parallel.h>
#include <ATen/Version.h>
#include <torch/version.h>

#include <fmt/format.h>

#include <iostream>
#include <sstream>
#include <string>

#include "cuda/device_query.hpp"
#include "machine/calibration_cache.hpp"
#include "machine/environment.hpp"
#include "run/calibrate_peak.hpp"
#include "tokbench/throughput.hpp"

namespace tokbench::run {
namespace {

constexpr Precision kReportedPrecisions[] = {Precision::fp64, Precision::fp32, Precision::tf32,
                                             Precision::bf16, Precision::fp16, Precision::fp8,
                                             Precision::int8};

std::string peak_cell(const std::optional<DevicePeak>& peak) {
  return peak ? fmt::format("{:.1f}", peak->flops_per_s / 1e12) : std::string("-");
}

// The lines of at::show_config() worth a benchmark reader's attention (BLAS, ISA, OpenMP,
// CUDA): the full text is long and mostly compiler flags.
void print_build_flags(std::ostream& out, bool verbose) {
  std::istringstream config(at::show_config());
  std::string line;
  while (std::getline(config, line)) {
    const bool keep = verbose || line.find("CPU capability") != std::string::npos ||
                      line.find("OpenMP") != std::string::npos ||
                      line.find("MKL") != std::string::npos ||
                      line.find("CUDA Runtime") != std::string::npos ||
                      line.find("CuDNN") != std::string::npos ||
                      line.find("BLAS_INFO") != std::string::npos;
    if (keep && !line.empty()) out << "#   " << line.substr(line.find_first_not_of(' ')) << "\n";
  }
}

// The cached calibration of this machine at the current thread count, or how to make one.
void print_calibration(std::ostream& out) {
  const auto file = machine::calibration_cache_file();
  std::string error;
  const auto entries = machine::read_calibrations(file, &error);
  const auto here = machine::find_calibration(entries, machine::calibration_key_here(at::get_num_threads(), TORCH_VERSION));
  if (!error.empty()) out << "#   calibration cache: " << error << "\n";
  if (!here) {
    out << fmt::format("#   measured peak: none cached for {} threads (run `tokbench env --calibrate{}`; {} entr{} in {})\n",
                       at::get_num_threads(), " [--num-threads N]", entries.size(),
                       entries.size() == 1 ? "y" : "ies", file.string());
    return;
  }
  out << fmt::format("#   measured peak at {} threads ({}, {}), used for CPU MFU:\n", here->key.threads,
                     here->measured_at, file.string());
  for (const auto& p : here->peaks)
    out << fmt::format("#     {:<5} {:8.3f} TFLOP/s  {} {}\n", p.dtype, p.flops_per_s / 1e12, p.kernel, p.shape);
}

bool calibrate(std::ostream& out) {
  out << fmt::format("# calibrating the CPU's matmul peak at {} threads (a few seconds)...\n", at::get_num_threads());
  const machine::CpuCalibration result =
      calibrate_cpu_peak(CalibrationSettings{}, [&out](const std::string& line) {
        out << "#   " << line << "\n" << std::flush;
      });
  const auto file = machine::calibration_cache_file();
  try {
    machine::save_calibration(file, result);
  } catch (const std::exception& e) {
    std::cerr << "tokbench: error: " << e.what() << "\n";
    return false;
  }
  for (const auto& p : result.peaks)
    out << fmt::format("# {} peak {:.3f} TFLOP/s ({} {})\n", p.dtype, p.flops_per_s / 1e12, p.kernel, p.shape);
  out << "# saved to " << file.string() << "\n";
  return true;
}

}  // namespace

bool write_env_report(const EnvOptions& options, std::ostream& out) {
  if (options.num_threads > 0) at::set_num_threads(options.num_threads);
  if (options.calibrate) return calibrate(out);
  const machine::Environment env = machine::capture_environment();
  out << "# tokbench " << env.tokbench_version << " (git " << env.git_revision << ")\n";
  out << "# LibTorch " << TORCH_VERSION << ", intra-op threads " << at::get_num_threads() << "\n";
  print_build_flags(out, options.verbose);

  const CpuInfo cpu = detect_cpu();
  out << "#\n# CPU: " << cpu.model << "\n";
  out << fmt::format("#   {} physical cores, {} logical CPUs, max clock {:.2f} GHz, vector ISA {}\n",
                     cpu.physical_cores, cpu.logical_cpus, cpu.max_clock_ghz, cpu.vector_isa);
  out << "#   estimated peak TFLOP/s (cores x clock x FLOPs/cycle; an estimate, not a datasheet):\n";
  out << "#  ";
  for (Precision p : kReportedPrecisions) out << fmt::format(" {:>7}", to_string(p));
  out << "\n#  ";
  for (Precision p : kReportedPrecisions) out << fmt::format(" {:>7}", peak_cell(estimate_cpu_peak(cpu, p)));
  out << "\n";
  print_calibration(out);

  const cuda::CudaReport cuda = cuda::query_cuda();
  out << "#\n# CUDA: ";
  if (!cuda.compiled) {
    out << cuda.status << "\n";
    return true;
  }
  out << fmt::format("runtime {}.{}, driver {}: {}\n", cuda.runtime_version / 1000,
                     (cuda.runtime_version % 1000) / 10,
                     cuda.driver_version ? fmt::format("{}.{}", cuda.driver_version / 1000,
                                                       (cuda.driver_version % 1000) / 10)
                                         : std::string("none"),
                     cuda.status);
  for (const auto& dev : cuda.devices) {
    out << fmt::format("#   cuda:{} {} ({:.1f} GiB, sm_{}{}, {} SMs)\n", dev.index, dev.name,
                       dev.total_memory_bytes / double(1ull << 30), dev.compute_capability_major,
                       dev.compute_capability_minor, dev.multiprocessors);
    if (!match_device_chip(dev.name)) {
      out << "#     no peak known for this device: MFU will read N/A unless --peak-tflops is given\n";
      continue;
    }
    out << "#     datasheet dense peak TFLOP/s:";
    for (Precision p : kReportedPrecisions)
      out << fmt::format(" {}={}", to_string(p), peak_cell(lookup_device_peak(dev.name, p)));
    out << "\n";
  }
  return true;
}

}  // namespace tokbench::run
