// The per-unit communication plan over a step's layout (comm_plan.hpp).
#include "parallel/comm_plan.hpp"

#include <stdexcept>

namespace tokbench::parallel {

std::string_view to_string(CollectiveCall call) {
  switch (call) {
    case CollectiveCall::all_reduce: return "all_reduce";
    case CollectiveCall::all_gather: return "all_gather";
    case CollectiveCall::reduce_scatter: return "reduce_scatter";
  }
  return "?";
}

std::string_view to_string(CommGroup group) {
  switch (group) {
    case CommGroup::world: return "world";
    case CommGroup::shard: return "shard";
    case CommGroup::replica: return "replica";
  }
  return "?";
}

std::string_view to_string(CommPurpose purpose) {
  switch (purpose) {
    case CommPurpose::ddp_bucket: return "ddp_bucket";
    case CommPurpose::gather_for_forward: return "gather_for_forward";
    case CommPurpose::gather_for_backward: return "gather_for_backward";
    case CommPurpose::reduce_gradients: return "reduce_gradients";
    case CommPurpose::reduce_across_replicas: return "reduce_across_replicas";
    case CommPurpose::refresh_parameters: return "refresh_parameters";
  }
  return "?";
}

int64_t CommPlan::bytes_per_iteration() const {
  int64_t total = 0;
  for (const auto& c : collectives) total += c.bytes * c.per_iteration;
  return total;
}

CommPlan plan_communication(const Layout& layout, const CommSettings& in) {
  const int64_t s = layout.shard_size;
  if (in.world_size <= 0 || s <= 0 || in.grad_accum <= 0)
    throw std::invalid_argument("communication plan: world size, shard size and GA must be positive");
  if (in.world_size % s != 0)
    throw std::invalid_argument("communication plan: shard size " + std::to_string(s) + " does not divide world size " +
                                std::to_string(in.world_size));
  // What is sent follows the mode's layout kind (strategy.hpp's mode table), not its name.
  const LayoutKind kind = mode_entry(in.mode).layout;
  if (kind == LayoutKind::fully_shard) {
    std::string valid;
    for (const std::string& word : mode_words([](const ModeEntry& e) { return e.layout != LayoutKind::fully_shard; }))
      valid += (valid.empty() ? "" : ", ") + word;
    throw std::invalid_argument(std::string("communication plan: ") + to_string(in.mode) +
                                " is PyTorch's fully_shard, not a tokbench step; valid: " + valid);
  }
  CommPlan plan;
  if (in.world_size == 1 || kind == LayoutKind::none) return plan;
  auto add = [&](std::size_t unit, CommPurpose purpose, CollectiveCall call, CommGroup group, int64_t group_size,
                 int64_t bytes, int64_t times) {
    plan.collectives.push_back(
        {static_cast<int64_t>(unit), purpose, call, group, group_size, bytes, times, layout.units[unit].name});
  };
  if (kind == LayoutKind::ddp_buckets) {
    const int64_t times = in.ddp_skip_sync ? 1 : in.grad_accum;
    for (std::size_t b = 0; b < layout.units.size(); ++b)
      add(b, CommPurpose::ddp_bucket, CollectiveCall::all_reduce, CommGroup::world, in.world_size,
          layout.units[b].padded_bytes(), times);
    return plan;
  }
  const bool zero3 = in.shard_mode == ShardMode::zero3;
  const int64_t replicas = in.world_size / s;
  // Gloo has no in-place reduce-scatter or all-gather worth using: tokbench all-reduces the whole
  // flat buffer instead (its own slice, or its shard amid zeros), so that is what is sent.
  const bool gloo = in.backend == CommBackend::gloo;
  const CollectiveCall gather = gloo ? CollectiveCall::all_reduce : CollectiveCall::all_gather;
  const CollectiveCall scatter = gloo ? CollectiveCall::all_reduce : CollectiveCall::reduce_scatter;
  for (std::size_t i = 0; i < layout.units.size(); ++i) {
    const int64_t flat = layout.units[i].padded_bytes();
    if (s > 1) {
      if (zero3) {
        add(i, CommPurpose::gather_for_forward, gather, CommGroup::shard, s, flat, in.grad_accum);
        add(i, CommPurpose::gather_for_backward, gather, CommGroup::shard, s, flat, in.grad_accum);
      }
      add(i, CommPurpose::reduce_gradients, scatter, CommGroup::shard, s, flat, in.grad_accum);
    }
    if (replicas > 1)
      add(i, CommPurpose::reduce_across_replicas, CollectiveCall::all_reduce, CommGroup::replica, replicas, flat / s, 1);
    if (!zero3 && s > 1) add(i, CommPurpose::refresh_parameters, gather, CommGroup::shard, s, flat, 1);
  }
  return plan;
}

}  // namespace tokbench::parallel
