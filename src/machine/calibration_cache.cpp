// The calibration cache file (calibration_cache.hpp): one JSON object
// {"schema": 1, "entries": [{key..., "measured_at", "peaks": [...]}, ...]}.
#include "machine/calibration_cache.hpp"

#include <nlohmann/json.hpp>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "machine/calibration_keys.hpp"
#include "tokbench/throughput.hpp"

namespace tokbench::machine {
namespace {

namespace ck = calibration_key;

constexpr int kSchema = 1;

nlohmann::json to_json(const CpuCalibration& c) {
  nlohmann::json peaks = nlohmann::json::array();
  for (const auto& p : c.peaks)
    peaks.push_back({{ck::dtype, p.dtype}, {ck::flops_per_s, p.flops_per_s}, {ck::kernel, p.kernel}, {ck::shape, p.shape}});
  return {{ck::cpu_model, c.key.cpu_model},     {ck::logical_cpus, c.key.logical_cpus},
          {ck::threads, c.key.threads},         {ck::torch_version, c.key.torch_version},
          {ck::measured_at, c.measured_at},     {ck::peaks, peaks}};
}

CpuCalibration from_json(const nlohmann::json& j) {
  CpuCalibration c;
  c.key.cpu_model = j.at(ck::cpu_model).get<std::string>();
  c.key.logical_cpus = j.at(ck::logical_cpus).get<int>();
  c.key.threads = j.at(ck::threads).get<int>();
  c.key.torch_version = j.at(ck::torch_version).get<std::string>();
  c.measured_at = j.at(ck::measured_at).get<std::string>();
  for (const auto& p : j.at(ck::peaks))
    c.peaks.push_back(MeasuredPeak{p.at(ck::dtype).get<std::string>(), p.at(ck::flops_per_s).get<double>(),
                                   p.at(ck::kernel).get<std::string>(), p.at(ck::shape).get<std::string>()});
  return c;
}

}  // namespace

CalibrationKey calibration_key_here(int threads, const std::string& torch_version) {
  const CpuInfo cpu = detect_cpu();
  return CalibrationKey{cpu.model, cpu.logical_cpus, threads, torch_version};
}

std::filesystem::path calibration_cache_file(const GetEnv& getenv_fn) {
  return tokbench_cache_dir(getenv_fn) / "calibration.json";
}

std::filesystem::path calibration_cache_file() {
  return calibration_cache_file([](const char* name) { return std::getenv(name); });
}

std::vector<CpuCalibration> read_calibrations(const std::filesystem::path& file, std::string* error) {
  std::error_code ec;
  if (!std::filesystem::exists(file, ec)) return {};
  std::ifstream in(file);
  std::ostringstream text;
  text << in.rdbuf();
  if (!in) {
    if (error) *error = "cannot read " + file.string();
    return {};
  }
  try {
    const auto j = nlohmann::json::parse(text.str());
    if (j.at(ck::schema).get<int>() != kSchema) {
      if (error) *error = file.string() + ": schema " + j.at(ck::schema).dump() + " is not " + std::to_string(kSchema);
      return {};
    }
    std::vector<CpuCalibration> entries;
    for (const auto& e : j.at(ck::entries)) entries.push_back(from_json(e));
    return entries;
  } catch (const nlohmann::json::exception& e) {
    if (error) *error = file.string() + " is not a calibration cache (" + e.what() + "); rerun `tokbench env --calibrate`";
    return {};
  }
}

void save_calibration(const std::filesystem::path& file, const CpuCalibration& entry) {
  std::vector<CpuCalibration> entries = read_calibrations(file);  // a malformed file is replaced
  std::erase_if(entries, [&](const CpuCalibration& c) { return c.key == entry.key; });
  entries.push_back(entry);
  nlohmann::json j = {{ck::schema, kSchema}, {ck::entries, nlohmann::json::array()}};
  for (const auto& e : entries) j[ck::entries].push_back(to_json(e));

  std::error_code ec;
  if (file.has_parent_path()) std::filesystem::create_directories(file.parent_path(), ec);
  if (ec) throw std::runtime_error("cannot create " + file.parent_path().string() + ": " + ec.message());
  // Temp file + rename: a reader (a run starting now) sees the old file or the new one.
  const std::filesystem::path temp = file.string() + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(temp, std::ios::trunc);
    out << j.dump(2) << "\n";
    if (!out.flush()) throw std::runtime_error("cannot write " + temp.string());
  }
  std::filesystem::rename(temp, file, ec);
  if (ec) {
    std::filesystem::remove(temp, ec);
    throw std::runtime_error("cannot write " + file.string() + ": " + ec.message());
  }
}

std::optional<CpuCalibration> find_calibration(const std::vector<CpuCalibration>& entries,
                                               const CalibrationKey& key) {
  for (const auto& e : entries)
    if (e.key == key) return e;
  return std::nullopt;
}

std::optional<MeasuredPeak> peak_for(const CpuCalibration& entry, const std::string& dtype) {
  for (const auto& p : entry.peaks)
    if (p.dtype == dtype && p.flops_per_s > 0) return p;
  return std::nullopt;
}

std::string measured_peak_source(const CpuCalibration& entry, const MeasuredPeak& peak) {
  const std::string date = entry.measured_at.substr(0, entry.measured_at.find('T'));
  return "measured by `tokbench env --calibrate` on " + date + ": " + peak.kernel + " " + peak.shape;
}

}  // namespace tokbench::machine
