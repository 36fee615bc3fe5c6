// Probing the machine for validation: cheap, no LibTorch, no allocation on a device.
#include "machine/machine_info.hpp"

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <vector>

namespace tokbench::machine {
namespace {

std::string trim(const std::string& text) {
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) return {};
  return text.substr(first, text.find_last_not_of(" \t\r\n") - first + 1);
}

std::optional<std::string> read_whole_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return std::nullopt;
  return text.str();
}

// "/a/b" -> {"/a/b", "/a", ""}: the cgroup and its ancestors, as suffixes of the root.
std::vector<std::string> self_and_ancestors(std::string path) {
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  if (path == "/") path.clear();
  std::vector<std::string> out;
  while (true) {
    out.push_back(path);
    if (path.empty()) break;
    const auto slash = path.rfind('/');
    path = slash == std::string::npos ? std::string() : path.substr(0, slash);
  }
  return out;
}

}  // namespace

std::optional<int64_t> parse_cgroup_bytes(const std::string& text) {
  const std::string value = trim(text);
  int64_t bytes = 0;
  const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), bytes);
  if (value.empty() || error != std::errc() || end != value.data() + value.size() || bytes < 0) return std::nullopt;
  if (bytes >= (int64_t{1} << 62)) return std::nullopt;  // v1's "no limit"
  return bytes;
}

std::optional<CgroupMemory> cgroup_memory_limit(const std::string& proc_self_cgroup, const FileReader& read_file,
                                                const std::string& root) {
  std::optional<CgroupMemory> tightest;
  auto consider = [&](const std::string& dir, const char* limit_name, const char* usage_name) {
    const std::string limit_file = dir + "/" + limit_name;
    const auto limit_text = read_file(limit_file);
    if (!limit_text) return;
    const auto limit = parse_cgroup_bytes(*limit_text);
    if (!limit) return;
    const auto usage_text = read_file(dir + "/" + usage_name);
    const int64_t usage = usage_text ? parse_cgroup_bytes(*usage_text).value_or(0) : 0;
    const int64_t available = std::max<int64_t>(0, *limit - usage);
    if (!tightest || available < tightest->available_bytes) tightest = CgroupMemory{*limit, usage, available, limit_file};
  };
  std::istringstream lines(proc_self_cgroup);
  std::string line;
  while (std::getline(lines, line)) {
    // hierarchy-ID:controller-list:cgroup-path (the path may itself contain ':')
    const auto first = line.find(':');
    const auto second = first == std::string::npos ? std::string::npos : line.find(':', first + 1);
    if (second == std::string::npos) continue;
    const std::string id = line.substr(0, first);
    const std::string controllers = line.substr(first + 1, second - first - 1);
    const std::string path = trim(line.substr(second + 1));
    if (id == "0" && controllers.empty()) {  // cgroup v2 (unified)
      for (const auto& level : self_and_ancestors(path)) consider(root + level, "memory.max", "memory.current");
      continue;
    }
    std::istringstream names(controllers);
    std::string name;
    while (std::getline(names, name, ','))
      if (name == "memory")
        for (const auto& level : self_and_ancestors(path))
          consider(root + "/memory" + level, "memory.limit_in_bytes", "memory.usage_in_bytes");
  }
  return tightest;
}

std::optional<int64_t> read_meminfo_bytes(const std::string& key) {
  std::ifstream in("/proc/meminfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(key + ":", 0) != 0) continue;
    std::istringstream fields(line.substr(key.size() + 1));
    int64_t kib = 0;
    if (fields >> kib) return kib * 1024;  // /proc/meminfo's "kB" are KiB
  }
  return std::nullopt;
}

static std::string read_cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) {
      auto colon = line.find(':');
      if (colon != std::string::npos) return line.substr(line.find_first_not_of(" \t", colon + 1));
    }
  }
  return "unknown CPU";
}

MachineInfo probe_machine() {
  MachineInfo info;
  cuda::CudaReport cuda = cuda::query_cuda();
  info.cuda_status = cuda.status;
  if (cuda.status == "ok") info.cuda_devices = cuda.devices;
  info.mem_total_bytes = read_meminfo_bytes("MemTotal").value_or(0);
  info.mem_available_bytes = read_meminfo_bytes("MemAvailable").value_or(info.mem_total_bytes);
  if (const auto cgroup_text = read_whole_file("/proc/self/cgroup")) {
    if (const auto cgroup = cgroup_memory_limit(*cgroup_text, read_whole_file)) {
      info.cgroup_available_bytes = cgroup->available_bytes;
      info.cgroup_limit_bytes = cgroup->limit_bytes;
      info.cgroup_usage_bytes = cgroup->usage_bytes;
    }
  }
  info.cpu_model = read_cpu_model();
  info.cpu_calibrations = read_calibrations(calibration_cache_file());  // a bad file: no calibration
  try {
    info.dist_env = read_dist_env(process_environment());
  } catch (const std::invalid_argument& e) {
    info.dist_env_error = e.what();
  }
  return info;
}

}  // namespace tokbench::machine
