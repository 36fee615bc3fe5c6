// The communication plan's JSON (comm_plan_json.hpp).
#include "results/comm_plan_json.hpp"

#include "results/comm_plan_keys.hpp"

namespace tokbench::results {

namespace pk = comm_plan_key;

nlohmann::ordered_json comm_plan_json(const parallel::CommPlan& plan) {
  nlohmann::ordered_json collectives = nlohmann::ordered_json::array();
  for (const auto& c : plan.collectives)
    collectives.push_back({{pk::unit, c.unit},
                           {pk::purpose, parallel::to_string(c.purpose)},
                           {pk::call, parallel::to_string(c.call)},
                           {pk::group, parallel::to_string(c.group)},
                           {pk::group_size, c.group_size},
                           {pk::bytes, c.bytes},
                           {pk::per_iteration, c.per_iteration}});
  return {{pk::bytes_per_iteration, plan.bytes_per_iteration()}, {pk::collectives, collectives}};
}

}  // namespace tokbench::results
