// CPU description and peak estimate. The peak is an estimate, labelled as such: physical
// cores x max clock x FLOPs per cycle of the widest vector FMA the flags advertise, assuming
// two FMA pipes per core (true of current server cores; one-pipe parts are overestimated).
#include <cmath>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <utility>

#include "tokbench/throughput.hpp"

namespace tokbench {
namespace {

std::string trim(std::string_view s) {
  const auto begin = s.find_first_not_of(" \t\r\n");
  if (begin == std::string_view::npos) return {};
  const auto end = s.find_last_not_of(" \t\r\n");
  return std::string(s.substr(begin, end - begin + 1));
}

bool has_flag(const std::string& flags, std::string_view flag) {
  std::istringstream in(flags);
  std::string word;
  while (in >> word)
    if (word == flag) return true;
  return false;
}

std::optional<std::string> read_file(const char* path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

struct IsaRate {
  const char* isa;
  double fp32_flops_per_cycle;  // per core; fp64 is half (half as many lanes)
  const char* why;
};

// 2 FMA pipes x lanes x 2 FLOPs per FMA; AVX without FMA: one add + one mul pipe.
constexpr IsaRate kIsaRates[] = {
    {"avx512", 64, "2 FMA pipes x 16 fp32 lanes x 2"},
    {"avx2+fma", 32, "2 FMA pipes x 8 fp32 lanes x 2"},
    {"avx", 16, "8-lane add + 8-lane mul per cycle"},
    {"sse", 8, "4-lane add + 4-lane mul per cycle"},
    {"neon", 16, "2 FMA pipes x 4 fp32 lanes x 2 (128-bit NEON)"},
    {"sve", 16, "2 FMA pipes x 4 fp32 lanes x 2 (assumes 128-bit SVE)"},
};

}  // namespace

CpuInfo parse_cpu_info(std::string_view proc_cpuinfo, std::optional<double> cpufreq_max_khz) {
  CpuInfo info;
  std::set<std::pair<std::string, std::string>> cores;  // (physical id, core id)
  std::string physical_id, flags, features;
  double max_mhz = 0;
  std::istringstream in{std::string(proc_cpuinfo)};
  std::string line;
  while (std::getline(in, line)) {
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    const std::string key = trim(std::string_view(line).substr(0, colon));
    const std::string value = trim(std::string_view(line).substr(colon + 1));
    if (key == "processor") {
      ++info.logical_cpus;
    } else if ((key == "model name" || key == "Model" || key == "Hardware") &&
               info.model.empty()) {
      info.model = value;
    } else if (key == "physical id") {
      physical_id = value;
    } else if (key == "core id") {
      cores.emplace(physical_id, value);
    } else if (key == "cpu MHz") {
      max_mhz = std::max(max_mhz, std::atof(value.c_str()));
    } else if (key == "flags" && flags.empty()) {
      flags = value;
    } else if (key == "Features" && features.empty()) {
      features = value;
    }
  }
  // Without topology lines (ARM, some VMs) every logical CPU counts as a core.
  info.physical_cores = cores.empty() ? info.logical_cpus : static_cast<int>(cores.size());
  if (cpufreq_max_khz.has_value() && *cpufreq_max_khz > 0) {
    info.max_clock_ghz = *cpufreq_max_khz / 1e6;
  } else {
    info.max_clock_ghz = max_mhz / 1e3;  // the current clock: a floor for the max
  }
  if (!flags.empty()) {
    if (has_flag(flags, "avx512f")) {
      info.vector_isa = "avx512";
    } else if (has_flag(flags, "avx2") && has_flag(flags, "fma")) {
      info.vector_isa = "avx2+fma";
    } else if (has_flag(flags, "avx")) {
      info.vector_isa = "avx";
    } else if (has_flag(flags, "sse2")) {
      info.vector_isa = "sse";
    }
  } else if (!features.empty()) {
    if (has_flag(features, "sve")) {
      info.vector_isa = "sve";
    } else if (has_flag(features, "asimd")) {
      info.vector_isa = "neon";
    }
  }
  return info;
}

CpuInfo detect_cpu() {
  const std::string cpuinfo = read_file("/proc/cpuinfo").value_or("");
  std::optional<double> max_khz;
  if (auto text = read_file("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq")) {
    const double khz = std::atof(text->c_str());
    if (khz > 0) max_khz = khz;
  }
  return parse_cpu_info(cpuinfo, max_khz);
}

std::optional<DevicePeak> estimate_cpu_peak(const CpuInfo& cpu, Precision precision) {
  if (precision != Precision::fp32 && precision != Precision::fp64) return std::nullopt;
  if (cpu.physical_cores <= 0 || !(cpu.max_clock_ghz > 0)) return std::nullopt;
  for (const auto& rate : kIsaRates) {
    if (cpu.vector_isa != rate.isa) continue;
    const double per_cycle =
        precision == Precision::fp32 ? rate.fp32_flops_per_cycle : rate.fp32_flops_per_cycle / 2;
    const double peak = cpu.physical_cores * cpu.max_clock_ghz * 1e9 * per_cycle;
    std::ostringstream source;
    source << "estimate: " << cpu.physical_cores << " cores x " << cpu.max_clock_ghz
           << " GHz x " << per_cycle << " " << to_string(precision) << " FLOPs/cycle ("
           << rate.isa << ": " << rate.why << (precision == Precision::fp64 ? ", /2 for fp64" : "")
           << ")";
    return DevicePeak{cpu.model, peak, source.str()};
  }
  return std::nullopt;
}

}  // namespace tokbench
