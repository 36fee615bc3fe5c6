// The predicted time account (predicted_account.hpp).
#include "predict/predicted_account.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <utility>
#include <vector>

#include "account/category.hpp"
#include "account/profiled_pass.hpp"
#include "account/time_account_json.hpp"
#include "predict/prediction_keys.hpp"

namespace tokbench::predict {

namespace pk = prediction_key;

namespace {

using account::Category;
using account::index_of;
using json = nlohmann::ordered_json;

PredictedAccount no_account(std::string why) {
  return {std::nullopt, json{{pk::made, false}, {pk::why, std::move(why)}}};
}

// The categories that share the predicted forward and backward: all but the optimizer (its own
// prediction) and exposed communication (the schedule's).
bool scaled_with_forward_backward(Category c) { return c != Category::optimizer && c != Category::exposed_comm; }

}  // namespace

PredictedAccount predict_time_account(const MeasuredRun& run, const PredictedIteration& it, const PredictedFlops& flops) {
  const results::Field<results::Block>& field = run.record.time_account;
  if (!field.value())
    return no_account("the measured record has no time_account (it ran with --time-account-iters 0, or its profiled pass "
                "failed): no account is predicted; predict from a run with one");
  account::TimeAccount measured;
  try {
    measured = account::time_account_from_json(*field.value());
  } catch (const std::invalid_argument& e) {
    return no_account(fmt::format("the measured record's time_account cannot be read ({}): no account is predicted", e.what()));
  }
  if (!(it.iteration > 0)) return no_account("the predicted iteration is not positive: no account is predicted");

  double measured_forward_backward = 0;
  for (const Category c : account::all_categories())
    if (scaled_with_forward_backward(c)) measured_forward_backward += measured[c].seconds;
  if (!(measured_forward_backward > 0) && it.forward_backward > 0)
    return no_account("the measured account holds no forward and backward time to scale: no account is predicted");
  const double fb_scale = measured_forward_backward > 0 ? it.forward_backward / measured_forward_backward : 0.0;
  const double measured_optimizer = measured[Category::optimizer].seconds;

  // One simulated iteration, its categories in seconds; the account's arithmetic (shares, MFU
  // costs) is the measured account's own, make_time_account's.
  account::ProfiledPass pass;
  pass.iterations = 1;
  for (const Category c : account::all_categories())
    if (scaled_with_forward_backward(c)) pass.seconds[index_of(c)] = measured[c].seconds * fb_scale;
  // The contention is work run slower beside collectives: a measured run books it in the
  // categories of the work it slowed. The step's own copies' part is elementwise, where the
  // copies are; the rest goes to the forward and backward categories, in their proportions.
  json contention_by_category = json::object();
  const double copy_contention = std::clamp(it.copy_contention, 0.0, std::max(0.0, it.contention));
  const double compute_contention = std::max(0.0, it.contention - copy_contention);
  if (compute_contention > 0 && it.forward_backward > 0)
    for (const Category c : account::all_categories())
      if (scaled_with_forward_backward(c) && pass.seconds[index_of(c)] > 0) {
        const double share = compute_contention * pass.seconds[index_of(c)] / it.forward_backward;
        pass.seconds[index_of(c)] += share;
        contention_by_category[std::string(account::json_name(c))] = share * 1e3;
      }
  if (copy_contention > 0) {
    const std::string name(account::json_name(Category::elementwise));
    contention_by_category[name] = contention_by_category.value(name, 0.0) + copy_contention * 1e3;
  }
  pass.seconds[index_of(Category::optimizer)] = it.optimizer;
  pass.seconds[index_of(Category::elementwise)] += it.step_copies + copy_contention;
  pass.seconds[index_of(Category::exposed_comm)] = it.exposed_comm;
  for (const double s : pass.seconds) pass.range_seconds += s;
  // FLOPs per iteration follow the micro-batches a rank runs in one.
  const double micro_ratio = static_cast<double>(it.grad_accum) / static_cast<double>(std::max<int64_t>(1, run.grad_accum));
  pass.gemm_flops = std::llround(static_cast<double>(measured.gemm_flops_per_iter) * micro_ratio);
  pass.attention_flops = std::llround(static_cast<double>(measured.attention_flops_per_iter) * micro_ratio);
  pass.uncounted_matmuls = measured.uncounted_matmuls;
  // What other holds: the measured run's largest events of other, scaled from its profiled seconds
  // to its predicted ones (its share of the contention with them).
  const auto& other = measured[Category::other];
  const double other_scale = other.profiled_seconds > 0 ? other.seconds / other.profiled_seconds * fb_scale : 0.0;
  const double other_contention = it.forward_backward > 0 ? 1.0 + compute_contention / it.forward_backward : 1.0;
  for (const auto& [name, seconds] : measured.other_top)
    pass.other_by_name.emplace_back(name, seconds * other_scale * other_contention);

  account::AccountInputs inputs;
  inputs.source = kPredictedAccountSource;
  inputs.measured_iteration_seconds = it.iteration;
  inputs.profiled_clock_seconds = it.iteration;
  inputs.model_flops_per_iter = flops.model_flops_per_iter;
  inputs.peak_flop_per_s = flops.peak_flop_per_s;
  inputs.peak_source = flops.peak_source;
  // The step's arithmetic with the measure equal to what the categories hold changes nothing;
  // the source is then named for what it is.
  inputs.exposed_comm_source = account::kExposedCommFromStep;
  inputs.exposed_comm_seconds = it.exposed_comm;
  account::TimeAccount predicted = account::make_time_account(pass, inputs);
  predicted.exposed_comm_source = kExposedCommFromSchedule;
  predicted.exposed_comm_step_seconds = std::nullopt;

  // What the units' timings hold of the measured account's forward and backward: below 1, work
  // of the measured iteration no unit timing saw (the batch, the loop's host time, what the
  // timing pass leaves out), which the prediction scales away with the rest.
  double unit_forward_backward = 0;
  for (const auto& u : run.units) unit_forward_backward += u.forward_seconds + u.backward_seconds;
  unit_forward_backward *= static_cast<double>(run.grad_accum);
  const auto ms = [](double s) { return s * 1e3; };
  json description = {
      {pk::made, true},
      {pk::from, fmt::format("the measured run's time_account (source {}, {} profiled iteration(s), its iteration "
                             "{:.3f} ms)",
                             measured.source, measured.profiled_iterations, ms(measured.iteration_seconds))},
      {pk::rule, "the measured categories but optimizer and exposed_comm share the predicted forward and backward, "
                 "and the contention model's cost on it, in their measured proportions; elementwise also holds the "
                 "parallel step's own copies and the contention on them; optimizer is the predicted optimizer; exposed_comm the schedule's waits"},
      {pk::forward_backward_scale, fb_scale},
      {pk::optimizer_scale, measured_optimizer > 0 ? json(it.optimizer / measured_optimizer) : json(nullptr)},
      {pk::unit_timings_coverage,
       measured_forward_backward > 0 ? json(unit_forward_backward / measured_forward_backward) : json(nullptr)},
      {pk::measured_exposed_comm_ms, ms(measured[Category::exposed_comm].seconds)},
      {pk::step_copies_ms, ms(it.step_copies)},
      {pk::step_copies_in, "elementwise"},
      {pk::contention_ms, ms(it.contention)},
      {pk::step_copies_contention_ms, ms(copy_contention)},
      {pk::contention_in, std::move(contention_by_category)},
  };
  return {std::move(predicted), std::move(description)};
}

}  // namespace tokbench::predict
