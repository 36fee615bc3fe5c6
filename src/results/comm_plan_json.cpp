// The communication plan's JSON (comm_plan_json.hpp).
#include "results/comm_plan_json.hpp"

namespace tokbench::results {

nlohmann::ordered_json comm_plan_json(const parallel::CommPlan& plan) {
  nlohmann::ordered_json collectives = nlohmann::ordered_json::array();
  for (const auto& c : plan.collectives)
    collectives.push_back({{"unit", c.unit},
                           {"purpose", parallel::to_string(c.purpose)},
                           {"call", parallel::to_string(c.call)},
                           {"group", parallel::to_string(c.group)},
                           {"group_size", c.group_size},
                           {"bytes", c.bytes},
                           {"per_iteration", c.per_iteration}});
  return {{"bytes_per_iteration", plan.bytes_per_iteration()}, {"collectives", collectives}};
}

}  // namespace tokbench::results
