// One rank's side of a benchmark of collectives, over the world group the job's runs use
// (distributed/process_groups.hpp): for each collective and size, one checked run, the warm-up,
// then the measured iterations, each timed alone; and the exchange that leaves every rank with
// the slowest rank's time of every iteration (nccl-tests reports the slowest rank too).
#pragma once

#include <c10/core/Device.h>
#include <torch/csrc/distributed/c10d/Backend.hpp>

#include <functional>
#include <vector>

#include "comm/comm_plan.hpp"
#include "comm/comm_result.hpp"

namespace tokbench::comm {

// Every collective of the plan at every size (sizes too small for a collective's split are left
// out), in the plan's order. On the CPU each iteration is timed by the host clock around the
// collective and its wait; on CUDA by events on the benchmark's own communication stream
// (cuda_stream_timer.hpp), read after the stream is synchronised, outside the timed iterations.
// Every rank must call it with the same plan: the ranks meet in every collective.
// `starting` is told each collective before its sizes run (rank 0's progress lines).
std::vector<MeasuredPoint> measure_collectives(c10d::Backend& world, const c10::Device& device, const CommPlan& plan,
                                               const std::function<void(Collective)>& starting = {});

// Makes every point's times the slowest rank's, iteration by iteration, and `correct` false on
// every rank when any rank's check failed: one MAX all-reduce over the world group; then the
// CPU and wall seconds summed over the ranks (a SUM all-reduce), for gloo_busy_fraction.
void keep_slowest_rank(c10d::Backend& world, const c10::Device& device, std::vector<MeasuredPoint>& points);

}  // namespace tokbench::comm
