// Measured collective times and their interpolation (comm_measurements.hpp).
#include "predict/comm_measurements.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "machine/environment_keys.hpp"
#include "results/comm_document_keys.hpp"

namespace tokbench::predict {
namespace {

using nlohmann::json;

namespace doc_key = results::comm_document_key;

constexpr const char* kSchema = doc_key::schema_name;
constexpr int64_t kSchemaVersion = doc_key::schema_version_now;

}  // namespace

CommMeasurements parse_comm_document(std::string_view text, const std::string& source) {
  auto refuse = [&](const std::string& what) {
    throw std::invalid_argument(fmt::format("comm document '{}': {}", source, what));
  };
  json doc;
  try {
    doc = json::parse(text);
  } catch (const json::exception&) {
    refuse("not JSON (written by `tokbench comm --output FILE`?)");
  }
  if (!doc.is_object() || doc.value(doc_key::schema, json()) != kSchema)
    refuse(fmt::format("not a tokbench comm document (its \"{}\" is not \"{}\")", doc_key::schema, kSchema));
  const json version = doc.value(doc_key::schema_version, json());
  if (!version.is_number_integer() || version.get<int64_t>() < 1)
    refuse(fmt::format("\"{}\" must be 1 to {}", doc_key::schema_version, kSchemaVersion));
  if (version.get<int64_t>() > kSchemaVersion)
    refuse(fmt::format("written by a newer tokbench (schema version {}); this one reads 1 to {}",
                       version.get<int64_t>(), kSchemaVersion));
  auto whole = [&](const char* key, bool required) -> int64_t {
    const json v = doc.value(key, json());
    if (v.is_null() && !required) return 0;
    if (!v.is_number_integer() || v.get<int64_t>() < 1) refuse(fmt::format("\"{}\" must be a whole number >= 1", key));
    return v.get<int64_t>();
  };
  CommMeasurements m;
  m.source = source;
  m.backend = doc.value(doc_key::backend, std::string());
  m.device = doc.value(doc_key::device, std::string());
  m.dtype = doc.value(doc_key::dtype, std::string());
  if (m.device != "cpu" && m.device != "cuda")
    refuse(fmt::format("\"{}\" must be \"cpu\" or \"cuda\"", doc_key::device));
  m.world_size = whole(doc_key::world_size, true);
  m.nnodes = std::max<int64_t>(1, whole(doc_key::nnodes, false));
  m.nproc_per_node = whole(doc_key::nproc_per_node, false);
  if (m.nproc_per_node == 0) m.nproc_per_node = m.world_size / m.nnodes;
  m.threads_per_rank = whole(doc_key::threads_per_rank, false);
  if (const json env = doc.value(doc_key::environment, json()); env.is_object())
    for (const char* key : {machine::environment_key::cpu_cores, machine::environment_key::old_cores})
      if (env.contains(key) && env[key].is_number_integer() && env[key].get<int64_t>() > 0) {
        m.cpu_cores = env[key].get<int64_t>();
        break;
      }
  if (const json sharing = doc.value(doc_key::compute_sharing, json()); !sharing.is_null()) {
    const json ranks = sharing.is_object() ? sharing.value(doc_key::ranks_per_node, json()) : json();
    const json threads = sharing.is_object() ? sharing.value(doc_key::threads_per_rank, json()) : json();
    const json slowdown = sharing.is_object() ? sharing.value(doc_key::slowdown, json()) : json();
    if (!ranks.is_number_integer() || ranks.get<int64_t>() < 1 || !threads.is_number_integer() ||
        threads.get<int64_t>() < 1 || !slowdown.is_number() || !std::isfinite(slowdown.get<double>()) ||
        !(slowdown.get<double>() > 0))
      refuse(fmt::format("\"{}\" needs whole \"{}\" and \"{}\" >= 1 and a \"{}\" > 0", doc_key::compute_sharing,
                         doc_key::ranks_per_node, doc_key::threads_per_rank, doc_key::slowdown));
    m.compute_sharing.emplace();
    m.compute_sharing->ranks_per_node = ranks.get<int64_t>();
    m.compute_sharing->threads_per_rank = threads.get<int64_t>();
    m.compute_sharing->slowdown = m.compute_sharing->slowdown_q1 = m.compute_sharing->slowdown_q3 = slowdown.get<double>();
    // The quartiles, when this document records them (older ones do not: no spread then).
    const json q1 = sharing.value(doc_key::slowdown_q1, json()), q3 = sharing.value(doc_key::slowdown_q3, json());
    if (q1.is_number() && q3.is_number() && q1.get<double>() > 0 && q3.get<double>() >= q1.get<double>()) {
      m.compute_sharing->slowdown_q1 = q1.get<double>();
      m.compute_sharing->slowdown_q3 = q3.get<double>();
    }
    // The reference GEMM's time alone, and its size: "gemm_size" where recorded, else the n of
    // the "gemm" text's "fp32 NxNxN" (every tokbench comm wrote that text).
    if (const json alone = sharing.value(doc_key::alone_ms, json());
        alone.is_number() && std::isfinite(alone.get<double>()) && alone.get<double>() > 0)
      m.compute_sharing->alone_seconds = alone.get<double>() / 1e3;
    if (const json size = sharing.value(doc_key::gemm_size, json());
        size.is_number_integer() && size.get<int64_t>() > 0) {
      m.compute_sharing->gemm_size = size.get<int64_t>();
    } else if (const json words = sharing.value(doc_key::gemm, json()); words.is_string()) {
      const std::string text = words.get<std::string>();
      long long n = 0;
      if (std::sscanf(text.c_str(), "fp32 %lldx", &n) == 1 && n > 0 &&
          text.rfind(fmt::format("fp32 {0}x{0}x{0}", n), 0) == 0)
        m.compute_sharing->gemm_size = static_cast<int64_t>(n);
    }
    if (const json beside = sharing.value(doc_key::beside_collective, json()); !beside.is_null()) {
      const auto number = [&](const char* key) {
        const json v = beside.is_object() ? beside.value(key, json()) : json();
        return v.is_number() && std::isfinite(v.get<double>()) ? std::optional<double>(v.get<double>()) : std::nullopt;
      };
      const auto steal = number(doc_key::steal), rate = number(doc_key::collective_rate);
      const auto covered = number(doc_key::covered_repeats), repeats = number(doc_key::repeats);
      if (!steal || *steal < 0 || *steal >= 1 || !rate || !(*rate > 0) || *rate > 1 || !covered || !repeats ||
          *covered < 0 || *repeats < 1 || *covered > *repeats)
        refuse(fmt::format("\"{}.{}\" needs a \"{}\" from 0 to below 1, a \"{}\" above 0 up to 1, and whole \"{}\" "
                           "from 0 up to \"{}\" >= 1",
                           doc_key::compute_sharing, doc_key::beside_collective, doc_key::steal, doc_key::collective_rate,
                           doc_key::covered_repeats, doc_key::repeats));
      m.compute_sharing->beside = CommMeasurements::ComputeSharing::BesideCollective{
          *steal, *rate, static_cast<int64_t>(*covered), static_cast<int64_t>(*repeats)};
    }
  }
  if (const json busy = doc.value(doc_key::gloo_cpu_busy, json()); !busy.is_null()) {
    const json fraction = busy.is_object() ? busy.value(doc_key::fraction, json()) : json();
    if (!fraction.is_number() || !std::isfinite(fraction.get<double>()) || fraction.get<double>() < 0)
      refuse(fmt::format("\"{}\" needs a \"{}\" >= 0 (the cores a rank's collective keeps busy)", doc_key::gloo_cpu_busy,
                         doc_key::fraction));
    m.gloo_busy_fraction = fraction.get<double>();
  }
  const json results = doc.value(doc_key::results, json());
  if (!results.is_array() || results.empty())
    refuse(fmt::format("\"{}\" must be a non-empty list of measurements", doc_key::results));
  std::map<std::string, std::map<double, std::vector<double>>> times;
  std::map<std::string, std::map<double, std::pair<double, double>>> extremes;  // the fastest and slowest call
  for (std::size_t i = 0; i < results.size(); ++i) {
    const json& r = results[i];
    const json name = r.is_object() ? r.value(doc_key::collective, json()) : json();
    const json size = r.is_object() ? r.value(doc_key::size_bytes, json()) : json();
    const json time = r.is_object() ? r.value(doc_key::time_us, json()) : json();
    if (!name.is_string() || !size.is_number() || !time.is_number() || !(size.get<double>() > 0) ||
        !(time.get<double>() > 0) || !std::isfinite(time.get<double>()))
      refuse(fmt::format("{}[{}] needs a \"{}\", a \"{}\" > 0 and a \"{}\" > 0", doc_key::results, i, doc_key::collective,
                         doc_key::size_bytes, doc_key::time_us));
    if (r.value(doc_key::correct, json(true)) == json(false))
      refuse(fmt::format("{}[{}] ({} of {} bytes) was marked incorrect: its collective returned wrong values; "
                         "measure again", doc_key::results, i, name.get<std::string>(), size.get<double>()));
    times[name.get<std::string>()][size.get<double>()].push_back(time.get<double>() * 1e-6);
    const json lo = r.value(doc_key::min_time_us, time), hi = r.value(doc_key::max_time_us, time);
    const double lo_s = (lo.is_number() && lo.get<double>() > 0 ? lo.get<double>() : time.get<double>()) * 1e-6;
    const double hi_s = (hi.is_number() && hi.get<double>() > 0 ? hi.get<double>() : time.get<double>()) * 1e-6;
    auto [it, fresh] = extremes[name.get<std::string>()].try_emplace(size.get<double>(), lo_s, hi_s);
    if (!fresh) it->second = {std::min(it->second.first, lo_s), std::max(it->second.second, hi_s)};
  }
  // A size measured more than once (documents appended together) takes the mean of its times.
  for (const auto& [name, by_size] : times)
    for (const auto& [size, list] : by_size) {
      double sum = 0;
      for (double t : list) sum += t;
      const double mean = sum / static_cast<double>(list.size());
      const auto [lo, hi] = extremes[name][size];
      m.by_collective[name].push_back({size, mean, std::min(lo, mean), std::max(hi, mean)});
    }
  return m;
}

CommMeasurements read_comm_document(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::invalid_argument(fmt::format("--comm '{}': cannot read it", path));
  std::ostringstream text;
  text << in.rdbuf();
  return parse_comm_document(text.str(), path);
}

double interpolated_seconds(const CommMeasurements& m, std::string_view collective, double bytes) {
  const auto it = m.by_collective.find(std::string(collective));
  if (it == m.by_collective.end()) {
    std::string measured;
    for (const auto& [name, points] : m.by_collective) measured += (measured.empty() ? "" : ", ") + name;
    throw std::invalid_argument(fmt::format("comm document '{}' has no {} measurements (it has: {}); measure it with "
                                            "tokbench comm",
                                            m.source, collective, measured));
  }
  const auto& points = it->second;
  if (bytes <= 0) return 0;
  if (bytes <= points.front().size_bytes) return points.front().seconds;
  if (bytes >= points.back().size_bytes) return points.back().seconds * bytes / points.back().size_bytes;
  const auto upper = std::upper_bound(points.begin(), points.end(), bytes,
                                      [](double b, const CommPoint& p) { return b < p.size_bytes; });
  const CommPoint& hi = *upper;
  const CommPoint& lo = *(upper - 1);
  const double t = (std::log(bytes) - std::log(lo.size_bytes)) / (std::log(hi.size_bytes) - std::log(lo.size_bytes));
  return std::exp(std::log(lo.seconds) + t * (std::log(hi.seconds) - std::log(lo.seconds)));
}

}  // namespace tokbench::predict

namespace tokbench::predict {

std::pair<double, double> relative_spread(const CommMeasurements& m, std::string_view collective, double bytes) {
  const auto it = m.by_collective.find(std::string(collective));
  if (it == m.by_collective.end() || it->second.empty() || !(bytes > 0)) return {1.0, 1.0};
  const CommPoint* nearest = &it->second.front();
  for (const auto& p : it->second)
    if (std::abs(std::log(p.size_bytes / bytes)) < std::abs(std::log(nearest->size_bytes / bytes))) nearest = &p;
  if (!(nearest->seconds > 0)) return {1.0, 1.0};
  return {nearest->min_seconds / nearest->seconds, nearest->max_seconds / nearest->seconds};
}

}  // namespace tokbench::predict
