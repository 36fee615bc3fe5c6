// The timed view of a predicted run's communication (comm_plan.hpp).
#include "predict/comm_plan.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

namespace tokbench::predict {
namespace {

void check_units(const CommPlanInput& in) {
  const auto& units = in.units;
  const bool shaped = units.size() >= 2 && units.front().kind == UnitKind::embedding &&
                      units.back().kind == UnitKind::head &&
                      std::all_of(units.begin() + 1, units.end() - 1, [](const UnitShape& u) { return u.kind == UnitKind::block; });
  if (!shaped)
    throw std::invalid_argument("the timed units are not the model's: valid is embedding, then its blocks, then head");
  for (const auto& u : units)
    if (u.parameters <= 0)
      throw std::invalid_argument(fmt::format("unit '{}' has {} parameters; every unit holds at least one", u.name,
                                              u.parameters));
  for (const auto& p : in.parameters)
    if (p.timed_unit < 0 || p.timed_unit >= static_cast<int64_t>(units.size()))
      throw std::invalid_argument(fmt::format("parameter '{}' names timed unit {}; valid: 0..{}", p.name, p.timed_unit,
                                              units.size() - 1));
}

// Backward meets the units in reverse: head first, the blocks from the last, the embedding last.
int64_t backward_position(const std::vector<UnitShape>& units, int64_t unit) {
  const int64_t n = static_cast<int64_t>(units.size());
  return units[unit].kind == UnitKind::head ? 0 : n - 1 - unit;
}

// Each DDP bucket is ready when its gradient latest in backward is: of its parameters, the one
// in the unit backward reaches last, that far through the unit's gradients (which arrive in
// the buckets' order, reverse registration).
void time_buckets(const CommPlanInput& in, CommPlan& plan) {
  const auto& shapes = plan.layout.parameters;
  std::vector<int64_t> total(in.units.size(), 0), done(in.units.size(), 0);
  for (const auto& p : shapes) total[p.timed_unit] += p.elements;
  for (const auto& bucket : plan.layout.units) {
    CommUnit unit;
    unit.name = bucket.name;
    unit.padded_elements = bucket.padded_elements;
    int64_t best_position = -1;
    for (const int64_t i : bucket.parameters) {
      const int64_t u = shapes[i].timed_unit;
      done[u] += shapes[i].elements;
      const int64_t position = backward_position(in.units, u);
      if (position >= best_position) {
        best_position = position;
        unit.ready_unit = u;
        unit.ready_fraction = static_cast<double>(done[u]) / static_cast<double>(total[u]);
      }
    }
    plan.units.push_back(unit);
  }
}

}  // namespace

CommPlan plan_communication(const CommPlanInput& in) {
  check_units(in);
  if (in.world_size <= 0 || in.shard_size <= 0 || in.grad_accum <= 0 || in.ddp_bucket_bytes <= 0)
    throw std::invalid_argument("communication plan: world size, shard size, GA and bucket size must be positive");
  if (in.world_size % in.shard_size != 0)
    throw std::invalid_argument(fmt::format("communication plan: shard size {} does not divide world size {}",
                                            in.shard_size, in.world_size));
  CommPlan plan;
  if (in.world_size == 1 || in.strategy == parallel::DistMode::none) return plan;
  const bool ddp = parallel::mode_entry(in.strategy).layout == parallel::LayoutKind::ddp_buckets;
  plan.layout = ddp ? parallel::layout_ddp_buckets(in.parameters, in.ddp_bucket_bytes)
                    : parallel::layout_fsdp_units(in.parameters, in.fsdp_units, in.shard_size, in.fsdp_min_unit_params);
  parallel::CommSettings settings;
  settings.mode = in.strategy;
  settings.shard_mode = in.zero3 ? parallel::ShardMode::zero3 : parallel::ShardMode::zero2;
  settings.world_size = in.world_size;
  settings.grad_accum = in.grad_accum;
  settings.ddp_skip_sync = in.ddp_skip_sync;
  settings.backend = in.backend;
  static_cast<parallel::CommPlan&>(plan) = parallel::plan_communication(plan.layout, settings);
  if (ddp) {
    time_buckets(in, plan);
    return plan;
  }
  for (std::size_t u = 0; u < plan.layout.units.size(); ++u) {
    const auto& unit = plan.layout.units[u];
    CommUnit timed;
    timed.name = unit.name;
    timed.padded_elements = unit.padded_elements;
    plan.units.push_back(timed);
  }
  plan.fsdp_gathers = parallel::zero3_gathers(plan.layout);
  return plan;
}

}  // namespace tokbench::predict
