// Cluster descriptions (cluster.hpp): TOML files and the compiled-in presets.
#include "predict/cluster.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <toml++/toml.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "predict/cluster_keys.hpp"
#include "predict/cluster_presets.hpp"

namespace tokbench::predict {

std::string_view to_string(RingAlgorithm algorithm) {
  return algorithm == RingAlgorithm::ring ? "ring" : "hierarchical";
}

namespace {

// Reads one table's keys, refusing unknown ones and wrong types, in one line each.
class TableReader {
 public:
  TableReader(const toml::table& table, std::string source, std::string where, std::vector<std::string> keys)
      : table_(table), source_(std::move(source)), where_(std::move(where)), keys_(std::move(keys)) {
    for (const auto& [key, node] : table_)
      if (std::find(keys_.begin(), keys_.end(), std::string(key.str())) == keys_.end())
        refuse(fmt::format("unknown key '{}{}'; valid: {}", where_, key.str(), fmt::join(keys_, ", ")));
  }

  [[noreturn]] void refuse(const std::string& what) const {
    throw std::invalid_argument(fmt::format("cluster '{}': {}", source_, what));
  }

  const toml::node* find(const std::string& key) const { return table_.get(key); }

  std::optional<std::string> text(const std::string& key, const std::vector<std::string>& valid = {}) const {
    const toml::node* node = find(key);
    if (!node) return std::nullopt;
    if (!node->is_string()) refuse(fmt::format("'{}{}' must be text", where_, key));
    std::string value = node->as_string()->get();
    if (!valid.empty() && std::find(valid.begin(), valid.end(), value) == valid.end())
      refuse(fmt::format("'{}{}' = \"{}\" is not valid; valid: {}", where_, key, value, fmt::join(valid, ", ")));
    return value;
  }

  // A number > 0 (or >= 0 with allow_zero); at most `most` when given.
  std::optional<double> number(const std::string& key, bool allow_zero = false,
                               std::optional<double> most = std::nullopt) const {
    const toml::node* node = find(key);
    if (!node) return std::nullopt;
    if (!node->is_integer() && !node->is_floating_point()) refuse(fmt::format("'{}{}' must be a number", where_, key));
    const double value = node->value<double>().value_or(NAN);
    const bool in_range = std::isfinite(value) && (allow_zero ? value >= 0 : value > 0) && (!most || value <= *most);
    if (!in_range)
      refuse(fmt::format("'{}{}' = {} is not valid; valid: a number {}{}", where_, key, value,
                         allow_zero ? ">= 0" : "> 0", most ? fmt::format(" and <= {}", *most) : ""));
    return value;
  }

  std::optional<int64_t> count(const std::string& key) const {
    const toml::node* node = find(key);
    if (!node) return std::nullopt;
    if (!node->is_integer() || node->as_integer()->get() < 1 || node->as_integer()->get() > 1'000'000)
      refuse(fmt::format("'{}{}' must be a whole number from 1 to 1000000", where_, key));
    return node->as_integer()->get();
  }

  const toml::table* table(const std::string& key) const {
    const toml::node* node = find(key);
    if (!node) return nullptr;
    if (!node->is_table()) refuse(fmt::format("'{}{}' must be a table ([{}])", where_, key, key));
    return node->as_table();
  }

  template <typename T>
  T required(std::optional<T> value, const std::string& key, const std::string& what) const {
    if (!value) refuse(fmt::format("'{}{}' is missing ({})", where_, key, what));
    return *value;
  }

 private:
  const toml::table& table_;
  std::string source_, where_;
  std::vector<std::string> keys_;
};

Link read_link(const toml::table& table, const std::string& source, const std::string& name) {
  namespace key = cluster_key;
  const TableReader r(table, source, name + ".", {key::bandwidth_GBps, key::latency_us, key::efficiency});
  Link link;
  link.bandwidth_GBps = r.required(r.number(key::bandwidth_GBps), key::bandwidth_GBps,
                                   "per device, per direction, in GB/s");
  link.latency_us = r.number(key::latency_us, /*allow_zero=*/true).value_or(0.0);
  link.efficiency = r.number(key::efficiency, false, 1.0).value_or(kDefaultLinkEfficiency);
  return link;
}

}  // namespace

Cluster parse_cluster_toml(std::string_view text, const std::string& source) {
  namespace key = cluster_key;
  toml::table table;
  try {
    table = toml::parse(text, source);
  } catch (const toml::parse_error& e) {
    throw std::invalid_argument(fmt::format("cluster '{}': not TOML: {} (line {})", source, e.description(),
                                            e.source().begin.line));
  }
  const TableReader r(table, source, "",
                      {key::name, key::device, key::device_name, key::devices_per_node, key::memory_per_device_GB,
                       key::cores_per_node, key::algorithm, key::peak_TFLOP_per_s, key::intra_node, key::inter_node});
  Cluster c;
  c.source = source;
  c.name = r.text(key::name).value_or(std::filesystem::path(source).stem().string());
  c.device = r.required(r.text(key::device, {"cuda", "cpu"}), key::device, "cuda or cpu");
  c.device_name = r.text(key::device_name).value_or("");
  c.devices_per_node = r.required(r.count(key::devices_per_node), key::devices_per_node, "ranks a node holds");
  c.memory_per_device_GB = r.number(key::memory_per_device_GB);
  c.cores_per_node = r.count(key::cores_per_node);
  if (c.device == "cpu" && !c.cores_per_node)
    r.refuse(fmt::format("'{}' is missing; a CPU cluster's ranks share a node's cores (a whole number)",
                         key::cores_per_node));
  c.algorithm = r.text(key::algorithm, {"ring", "hierarchical"}).value_or("ring") == "ring" ? RingAlgorithm::ring
                                                                                          : RingAlgorithm::hierarchical;
  if (const toml::table* peaks = r.table(key::peak_TFLOP_per_s)) {
    const std::vector<std::string> precisions{key::fp32, key::tf32, key::bf16, key::fp16, key::fp8};
    const TableReader p(*peaks, source, std::string(key::peak_TFLOP_per_s) + ".", precisions);
    for (const std::string& precision : precisions)
      if (auto v = p.number(precision)) c.peak_TFLOP_per_s[precision] = *v;
  }
  const toml::table* intra = r.table(key::intra_node);
  if (!intra)
    r.refuse(fmt::format("'[{}]' is missing ({}, {}, {} of the links inside a node)", key::intra_node,
                         key::bandwidth_GBps, key::latency_us, key::efficiency));
  c.intra_node = read_link(*intra, source, key::intra_node);
  if (const toml::table* inter = r.table(key::inter_node)) c.inter_node = read_link(*inter, source, key::inter_node);
  return c;
}

std::vector<std::string> cluster_preset_names() {
  std::vector<std::string> names;
  for (const auto& [name, text] : cluster_preset_texts()) names.emplace_back(name);
  std::sort(names.begin(), names.end());
  return names;
}

Cluster load_cluster(const std::string& spec) {
  for (const auto& [name, text] : cluster_preset_texts())
    if (spec == name) {
      Cluster c = parse_cluster_toml(text, std::string(name));
      c.source = "preset " + std::string(name);
      return c;
    }
  std::error_code ec;
  if (std::filesystem::path(spec).extension() == ".toml" || std::filesystem::is_regular_file(spec, ec)) {
    if (!std::filesystem::is_regular_file(spec, ec))
      throw std::invalid_argument(fmt::format("--cluster '{}': no such file", spec));
    std::ifstream in(spec, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    if (!in) throw std::invalid_argument(fmt::format("--cluster '{}': cannot read it", spec));
    Cluster c = parse_cluster_toml(text.str(), spec);
    c.source = "file " + spec;
    return c;
  }
  throw std::invalid_argument(fmt::format("--cluster '{}' is not valid; valid: {}, a FILE.toml, or measured (with --comm)",
                                          spec, fmt::join(cluster_preset_names(), ", ")));
}

}  // namespace tokbench::predict
