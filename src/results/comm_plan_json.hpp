// A communication plan (parallel/comm_plan.hpp) as a run record and a prediction write it:
// `bytes_per_iteration`, and `collectives`, each with its unit, purpose, call, group, group
// size, bytes and times per iteration. One writer, so the two documents compare key for key.
#pragma once

#include <nlohmann/json.hpp>

#include "parallel/comm_plan.hpp"

namespace tokbench::results {

nlohmann::ordered_json comm_plan_json(const parallel::CommPlan& plan);

}  // namespace tokbench::results
