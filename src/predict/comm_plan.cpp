// The per-unit communication plan (comm_plan.hpp).
#include "predict/comm_plan.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

namespace tokbench::predict {

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

namespace {

void check_units(const std::vector<UnitShape>& units) {
  const bool shaped = units.size() >= 2 && units.front().kind == UnitKind::embedding &&
                      units.back().kind == UnitKind::head &&
                      std::all_of(units.begin() + 1, units.end() - 1, [](const UnitShape& u) { return u.kind == UnitKind::block; });
  if (!shaped)
    throw std::invalid_argument("the timed units are not the model's: valid is embedding, then its blocks, then head");
  for (const auto& u : units)
    if (u.parameters <= 0)
      throw std::invalid_argument(fmt::format("unit '{}' has {} parameters; every unit holds at least one", u.name,
                                              u.parameters));
}

// Backward meets the units in reverse: head first, the blocks from the last, the embedding last.
int64_t backward_position(const std::vector<UnitShape>& units, int64_t unit) {
  const int64_t n = static_cast<int64_t>(units.size());
  return units[unit].kind == UnitKind::head ? 0 : n - 1 - unit;
}

// DDP's buckets. tokbench packs parameters in reverse registration order, and the model
// registers lm_head first, then the embedding, the blocks and the final norm: reversed, the
// blocks from the last, the embedding, then the head (whose final norm, a few thousand
// elements, is counted with lm_head). Within a unit the parameters are taken as one stream cut
// at the bucket size: tokbench never splits a parameter, so its buckets may close a little
// earlier (docs/predict.md, "Assumptions").
void plan_ddp(const CommPlanInput& in, CommPlan& plan) {
  const int64_t n = static_cast<int64_t>(in.units.size());
  std::vector<int64_t> order;
  for (int64_t u = n - 2; u >= 1; --u) order.push_back(u);  // blocks, last first
  order.push_back(0);                                        // embedding
  order.push_back(n - 1);                                    // head (lm_head)
  const int64_t capacity = std::max<int64_t>(1, in.ddp_bucket_bytes / in.bytes_per_element);
  CommUnit bucket;
  int64_t best_position = -1;
  auto close = [&] {
    if (bucket.elements == 0) return;
    bucket.name = fmt::format("bucket.{}", plan.units.size());
    bucket.padded_elements = bucket.elements;
    plan.units.push_back(bucket);
    bucket = CommUnit{};
    best_position = -1;
  };
  for (const int64_t u : order) {
    int64_t taken = 0;  // of this unit's parameters, in earlier buckets
    while (taken < in.units[u].parameters) {
      const int64_t room = capacity - bucket.elements;
      const int64_t take = std::min(room, in.units[u].parameters - taken);
      taken += take;
      bucket.elements += take;
      bucket.timing_units.push_back(u);
      // The bucket is ready when its gradient latest in backward order is: the unit backward
      // reaches last, this far through it.
      const int64_t position = backward_position(in.units, u);
      if (position >= best_position) {
        best_position = position;
        bucket.ready_unit = u;
        bucket.ready_fraction = static_cast<double>(taken) / static_cast<double>(in.units[u].parameters);
      }
      if (bucket.elements >= capacity) close();
    }
  }
  close();
  const int64_t times = in.ddp_skip_sync ? 1 : in.grad_accum;
  for (std::size_t b = 0; b < plan.units.size(); ++b)
    plan.collectives.push_back({static_cast<int64_t>(b), CommPurpose::ddp_bucket, CollectiveCall::all_reduce,
                                CommGroup::world, in.world_size, plan.units[b].elements * in.bytes_per_element, times});
}

// FSDP's units (fsdp_step.cpp, build_units): the whole model, or the root (embedding, final
// norm, head) first and then one per block; each a flat buffer padded to a multiple of S.
void plan_fsdp(const CommPlanInput& in, CommPlan& plan) {
  const int64_t n = static_cast<int64_t>(in.units.size());
  plan.fsdp_unit_of.assign(n, 0);
  if (in.fsdp_units == FsdpUnits::whole_model) {
    CommUnit model;
    model.name = "model";
    for (int64_t u = 0; u < n; ++u) {
      model.timing_units.push_back(u);
      model.elements += in.units[u].parameters;
    }
    plan.units.push_back(model);
  } else {
    plan.units.push_back(CommUnit{"root", {0, n - 1}, in.units[0].parameters + in.units[n - 1].parameters});
    for (int64_t u = 1; u + 1 < n; ++u) {
      plan.fsdp_unit_of[u] = static_cast<int64_t>(plan.units.size());
      plan.units.push_back(CommUnit{in.units[u].name, {u}, in.units[u].parameters});
    }
  }
  const int64_t s = in.shard_size;
  const int64_t replicas = in.world_size / s;
  // Gloo has no in-place reduce-scatter or all-gather worth using: tokbench all-reduces the whole
  // flat buffer instead (its own slice, or its shard amid zeros), so that is what is sent.
  const bool gloo = in.backend == Backend::gloo;
  const CollectiveCall gather = gloo ? CollectiveCall::all_reduce : CollectiveCall::all_gather;
  const CollectiveCall scatter = gloo ? CollectiveCall::all_reduce : CollectiveCall::reduce_scatter;
  for (std::size_t i = 0; i < plan.units.size(); ++i) {
    CommUnit& unit = plan.units[i];
    unit.padded_elements = (unit.elements + s - 1) / s * s;
    const int64_t flat = unit.padded_elements * in.bytes_per_element;
    const auto index = static_cast<int64_t>(i);
    if (s > 1) {
      if (in.zero3) {
        plan.collectives.push_back({index, CommPurpose::gather_for_forward, gather, CommGroup::shard, s, flat, in.grad_accum});
        plan.collectives.push_back({index, CommPurpose::gather_for_backward, gather, CommGroup::shard, s, flat, in.grad_accum});
      }
      plan.collectives.push_back({index, CommPurpose::reduce_gradients, scatter, CommGroup::shard, s, flat, in.grad_accum});
    }
    if (replicas > 1)
      plan.collectives.push_back({index, CommPurpose::reduce_across_replicas, CollectiveCall::all_reduce,
                                  CommGroup::replica, replicas, flat / s, 1});
    if (!in.zero3 && s > 1)
      plan.collectives.push_back({index, CommPurpose::refresh_parameters, gather, CommGroup::shard, s, flat, 1});
  }
}

}  // namespace

CommPlan plan_communication(const CommPlanInput& in) {
  check_units(in.units);
  if (in.bytes_per_element <= 0 || in.world_size <= 0 || in.shard_size <= 0 || in.grad_accum <= 0 ||
      in.ddp_bucket_bytes <= 0)
    throw std::invalid_argument("communication plan: element size, world size, shard size, GA and bucket size must be positive");
  if (in.world_size % in.shard_size != 0)
    throw std::invalid_argument(fmt::format("communication plan: shard size {} does not divide world size {}",
                                            in.shard_size, in.world_size));
  CommPlan plan;
  if (in.world_size == 1 || in.strategy == Strategy::none) return plan;
  if (in.strategy == Strategy::ddp) plan_ddp(in, plan);
  else plan_fsdp(in, plan);
  return plan;
}

nlohmann::ordered_json to_json(const CommPlan& plan) {
  nlohmann::ordered_json collectives = nlohmann::ordered_json::array();
  for (const auto& c : plan.collectives)
    collectives.push_back({{"unit", plan.units[c.comm_unit].name},
                           {"purpose", to_string(c.purpose)},
                           {"call", to_string(c.call)},
                           {"group", to_string(c.group)},
                           {"group_size", c.group_size},
                           {"bytes", c.bytes},
                           {"per_iteration", c.per_iteration}});
  return {{"bytes_per_iteration", plan.bytes_per_iteration()}, {"collectives", collectives}};
}

}  // namespace tokbench::predict
