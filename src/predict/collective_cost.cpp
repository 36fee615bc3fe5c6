// Collective times (collective_cost.hpp).
#include "predict/collective_cost.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

namespace tokbench::predict {

GroupShape group_shape(CommGroup group, const Placement& p) {
  const int64_t l = std::max<int64_t>(1, p.ranks_per_node);
  switch (group) {
    case CommGroup::world:
      return {p.world_size, p.nnodes, std::min(l, p.world_size)};
    case CommGroup::shard:  // S consecutive ranks: inside one node when S <= L
      if (p.shard_size <= l) return {p.shard_size, 1, p.shard_size};
      return {p.shard_size, p.shard_size / l, l};
    case CommGroup::replica: {  // ranks r, r+S, r+2S, ...: one per node once S >= L
      const int64_t replicas = p.world_size / p.shard_size;
      if (p.shard_size >= l) return {replicas, replicas, 1};
      return {replicas, p.nnodes, l / p.shard_size};
    }
  }
  return {};
}

namespace {

// (n-1)/n of the bytes cross each member's link once per pass; an all-reduce is two passes.
double passes(CollectiveCall call) { return call == CollectiveCall::all_reduce ? 2.0 : 1.0; }

double flat_ring_seconds(double passes_count, int64_t n, double bytes, double bytes_per_s, double latency_s) {
  if (n <= 1) return 0;
  const double steps = static_cast<double>(n - 1);
  return passes_count * (steps / static_cast<double>(n) * bytes / bytes_per_s + steps * latency_s);
}

const Link& inter_link(const Cluster& cluster, const GroupShape& shape) {
  if (!cluster.inter_node)
    throw std::invalid_argument(fmt::format("cluster '{}' has no [inter_node] link, but a process group spans {} nodes; "
                                            "describe the network in its TOML or use one node",
                                            cluster.name, shape.nodes));
  return *cluster.inter_node;
}

}  // namespace

double ring_collective_seconds(const Cluster& cluster, CollectiveCall call, const GroupShape& shape, double bytes) {
  const double p = passes(call);
  if (shape.size <= 1 || bytes <= 0) return 0;
  const Link& intra = cluster.intra_node;
  if (shape.nodes <= 1) return flat_ring_seconds(p, shape.size, bytes, intra.bytes_per_second(), intra.latency_seconds());
  const Link& inter = inter_link(cluster, shape);
  if (cluster.algorithm == RingAlgorithm::ring) {
    const double bw = std::min(intra.bytes_per_second(), inter.bytes_per_second());
    const double latency = std::max(intra.latency_seconds(), inter.latency_seconds());
    return flat_ring_seconds(p, shape.size, bytes, bw, latency);
  }
  // Hierarchical: within the node on the whole buffer (an all-reduce reduce-scatters there first
  // and all-gathers there last: p passes in all), across nodes on the node-local slice.
  const int64_t k = shape.members_per_node;
  const double inside = flat_ring_seconds(p, k, bytes, intra.bytes_per_second(), intra.latency_seconds());
  const double across = flat_ring_seconds(p, shape.nodes, bytes / static_cast<double>(k), inter.bytes_per_second(),
                                          inter.latency_seconds());
  return inside + across;
}

double ring_broadcast_seconds(const Cluster& cluster, const GroupShape& shape, double bytes) {
  if (shape.size <= 1 || bytes <= 0) return 0;
  const Link& intra = cluster.intra_node;
  if (shape.nodes <= 1) return bytes / intra.bytes_per_second() + intra.latency_seconds();
  const Link& inter = inter_link(cluster, shape);
  const double bw = std::min(intra.bytes_per_second(), inter.bytes_per_second());
  return bytes / bw + std::max(intra.latency_seconds(), inter.latency_seconds());
}

double CollectiveTimer::seconds(const PlannedCollective& c) const {
  const GroupShape shape = group_shape(c.group, placement_);
  if (!measured_) return ring_collective_seconds(cluster_, c.call, shape, static_cast<double>(c.bytes));
  if (shape.size <= 1) return 0;
  if (shape.size == measured_->world_size)
    return interpolated_seconds(*measured_, to_string(c.call), static_cast<double>(c.bytes));
  for (const auto& group : groups_)
    if (group.world_size == shape.size)
      return interpolated_seconds(group, to_string(c.call), static_cast<double>(c.bytes)) * concurrent_groups_factor(group);
  throw std::invalid_argument(fmt::format("comm document '{}' was measured over {} ranks; the {} group's collectives run "
                                          "over {} (hybrid sharding); measure that group size too (tokbench comm "
                                          "--nproc-per-node {}) and pass both to --comm, or use a cluster TOML",
                                          measured_->source, measured_->world_size, to_string(c.group), shape.size,
                                          shape.size));
}

double CollectiveTimer::concurrent_groups_factor(const CommMeasurements& group) const {
  // Every group of a hybrid job runs the same schedule, so its collectives run at once. On a
  // CPU node they move their bytes through the node's shared cores (Gloo's loopback transport
  // and reductions), where the document measured only its own ranks there. GPU groups use links
  // of their own.
  if (cluster_.device != "cpu" || group.nproc_per_node < 1) return 1.0;
  const double node_ranks = static_cast<double>(placement_.ranks_per_node);
  const double measured_ranks = static_cast<double>(group.nproc_per_node);
  if (!group.gloo_busy_fraction || !cluster_.cores_per_node)
    // Not measured: every collective taken to keep a core busy throughout, so the time grows
    // with the ranks communicating on the node.
    return std::max(1.0, node_ranks / measured_ranks);
  // Measured: each rank's collective keeps b cores busy. The node's ranks then ask for R·b cores
  // of its C; where that exceeds C each is slowed by R·b / C, against the oversubscription the
  // document's own ranks already had when measured (n·b over its machine's cores).
  const double b = *group.gloo_busy_fraction;
  const double cores = static_cast<double>(*cluster_.cores_per_node);
  const double measured_cores = static_cast<double>(group.cpu_cores.value_or(*cluster_.cores_per_node));
  const double predicted = std::max(1.0, node_ranks * b / cores);
  const double measured = std::max(1.0, measured_ranks * b / measured_cores);
  return std::max(1.0, predicted / measured);
}

std::string CollectiveTimer::method() const {
  if (measured_) {
    std::string sources = measured_->source;
    for (const auto& group : groups_) sources += fmt::format(", {} for groups of {}", group.source, group.world_size);
    return fmt::format("measured by tokbench comm ({}), interpolated log-log by size", sources);
  }
  return fmt::format("{} algorithm over the cluster's links (achievable bandwidth = peak x efficiency)",
                     to_string(cluster_.algorithm));
}

}  // namespace tokbench::predict
