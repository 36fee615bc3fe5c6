// How long one collective takes on a cluster: the ring algorithm's cost over the links a
// process group spans (docs/predict.md, "Communication"), or, for `--cluster measured`, the
// time `tokbench comm` measured for that collective and size. Torch-free.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "predict/cluster.hpp"
#include "predict/comm_measurements.hpp"
#include "predict/comm_plan.hpp"

namespace tokbench::predict {

// Where the ranks sit: W ranks, L per node on consecutive ranks (as the launchers number them),
// shard groups of S consecutive ranks.
struct Placement {
  int64_t world_size = 1;
  int64_t nnodes = 1;
  int64_t ranks_per_node = 1;
  int64_t shard_size = 1;
};

// The members of one process group: how many, on how many nodes, how many on each.
struct GroupShape {
  int64_t size = 1;
  int64_t nodes = 1;
  int64_t members_per_node = 1;
};
GroupShape group_shape(CommGroup group, const Placement& placement);

// The ring algorithm over `shape` (n members): all-reduce 2(n-1)/n · bytes/bw + 2(n-1)·latency,
// all-gather and reduce-scatter (n-1)/n · bytes/bw + (n-1)·latency, with the achievable bandwidth
// of the bottleneck link: inside one node the intra-node link; across nodes, a flat ring is bound
// by the slower of the intra-node link and a device's share of the node's network (inter-node
// bandwidth per device), a hierarchical one pays an intra-node step, an inter-node ring on
// bytes/k (k members per node) and the intra-node step again. Throws std::invalid_argument when
// the group spans nodes and the cluster has no [inter_node].
double ring_collective_seconds(const Cluster& cluster, CollectiveCall call, const GroupShape& shape, double bytes);

// A broadcast (not in a training step; offered for `tokbench comm` comparisons): bytes/bw + latency
// over the bottleneck link.
double ring_broadcast_seconds(const Cluster& cluster, const GroupShape& shape, double bytes);

// Times the plan's collectives on one cluster and placement.
class CollectiveTimer {
 public:
  CollectiveTimer(Cluster cluster, std::optional<CommMeasurements> measured, Placement placement,
                  std::vector<CommMeasurements> group_measurements = {})
      : cluster_(std::move(cluster)),
        measured_(std::move(measured)),
        groups_(std::move(group_measurements)),
        placement_(placement) {}
  // Throws std::invalid_argument in one line when no measured document can give the time (a
  // group size none was measured at, a collective it did not measure). A group smaller than the
  // world (hybrid sharding) is timed by the document of its size among the group measurements.
  double seconds(const PlannedCollective& collective) const;
  std::string method() const;  // "ring over the cluster's links", "measured by tokbench comm (FILE)"
  // A group document's times scaled for the groups communicating at once on one CPU node: where
  // the document measured the cores a collective keeps busy (b), the node's ranks' demand R·b
  // over its cores, against the document's own n·b over its machine's; else the node's ranks
  // over the ranks per node the document measured (every collective a whole core). 1 on GPUs,
  // and at least 1.
  double concurrent_groups_factor(const CommMeasurements& group) const;

 private:
  Cluster cluster_;
  std::optional<CommMeasurements> measured_;
  std::vector<CommMeasurements> groups_;
  Placement placement_;
};

}  // namespace tokbench::predict
