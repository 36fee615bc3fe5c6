// A cluster to predict on: its devices, how many a node holds, and the links between them
// (inside a node, across nodes), from a TOML file or a compiled-in preset (data/clusters/).
// Every bad file is refused in one line naming the file, the key and the valid values.
// Torch-free.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tokbench::predict {

// Achievable bandwidth is below the link's peak: nccl-tests reports about 80% of NVLink's peak
// as bus bandwidth on 8 A100s (docs/predict.md, "Presets"). A link's `efficiency` says otherwise.
inline constexpr double kDefaultLinkEfficiency = 0.8;

struct Link {
  double bandwidth_GBps = 0;  // per device, per direction, 10^9 bytes/s (peak)
  double latency_us = 0;      // per step of a ring
  double efficiency = kDefaultLinkEfficiency;  // achievable fraction of the peak
  double bytes_per_second() const { return bandwidth_GBps * 1e9 * efficiency; }
  double latency_seconds() const { return latency_us * 1e-6; }
};

// How a collective over ranks on several nodes is routed: one flat ring through every member,
// whose slowest hop (a node's network port) bounds it; or hierarchical, within each node first,
// then across nodes among the ranks of the same local index, then within each node again.
enum class RingAlgorithm { ring, hierarchical };
std::string_view to_string(RingAlgorithm algorithm);

struct Cluster {
  std::string name;
  std::string source;       // "preset h100-sxm-8", "file x.toml", "measured comm.json"
  std::string device;       // "cuda" or "cpu": the device kind a rank computes on
  std::string device_name;  // as a run reports it ("NVIDIA H100 80GB HBM3"), "" when not given
  int64_t devices_per_node = 0;  // ranks a node holds at most (CPU: ranks per machine)
  std::optional<double> memory_per_device_GB;
  std::optional<int64_t> cores_per_node;  // CPU clusters: the cores the node's ranks share
  std::map<std::string, double> peak_TFLOP_per_s;  // per device, dense, by precision (fp32, tf32, bf16)
  RingAlgorithm algorithm = RingAlgorithm::ring;
  Link intra_node;
  std::optional<Link> inter_node;  // none: a one-node cluster
};

// The cluster a TOML document describes; `source` names it in refusals. Throws
// std::invalid_argument: "cluster 'SOURCE': <what is wrong>; valid: <...>".
Cluster parse_cluster_toml(std::string_view text, const std::string& source);

// The compiled-in presets' names, sorted.
std::vector<std::string> cluster_preset_names();

// A preset's name, or a path to a TOML file. Throws std::invalid_argument naming the presets
// when `spec` is neither.
Cluster load_cluster(const std::string& spec);

}  // namespace tokbench::predict
