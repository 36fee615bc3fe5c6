// A prediction's time account (docs/predict.md, "The predicted time account"): the measured
// run's account carried to the predicted rank, in the categories and JSON shape a measured run's
// account has, so `tokbench explain PREDICTED.json MEASURED.json` says category by category
// where a prediction went wrong. The compute categories are the measured ones scaled as the
// prediction scales compute, exposed communication is the simulated schedule's waits, and the
// contention model's cost (forward and backward slowed beside collectives) is in the categories
// it slows, as a measured run books it. No account in, no account out. Torch-free.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>

#include "account/time_account.hpp"
#include "predict/measured_run.hpp"

namespace tokbench::predict {

// The account's `exposed_comm_source` in a prediction: the simulated schedule's waits.
inline constexpr const char* kExposedCommFromSchedule = "schedule";
// The account's `source` in a prediction.
inline constexpr const char* kPredictedAccountSource = "predicted";

// The predicted rank's iteration as the schedule made it, seconds per iteration; it sums
// exactly: iteration = forward_backward + optimizer + step_copies + exposed_comm + contention.
struct PredictedIteration {
  double iteration = 0;
  double forward_backward = 0;  // the units' forward and backward, every micro-batch, as scaled
  double optimizer = 0;
  double step_copies = 0;       // the parallel step's own copies (step_copies.hpp): elementwise
  double exposed_comm = 0;      // compute waiting for collectives
  double contention = 0;        // compute slowed by collectives sharing its cores (CPU)
  double copy_contention = 0;   // of it, the step's own copies slowed: elementwise
  int64_t grad_accum = 1;       // the predicted rank's micro-batches per iteration
};

// What the predicted record measures MFU against.
struct PredictedFlops {
  int64_t model_flops_per_iter = 0;  // F on the predicted rank: a micro-batch's FLOPs x its GA
  std::optional<double> peak_flop_per_s;
  std::string peak_source;
};

struct PredictedAccount {
  std::optional<account::TimeAccount> account;  // none when the measured run has none
  // `prediction.time_account`: how the account was made ({"made": true, the scales, where the
  // contention went}) or why there is none ({"made": false, "why": ...}).
  nlohmann::ordered_json description;
};

// The measured account's categories other than optimizer and exposed_comm share the predicted
// forward and backward, and the contention on it, in their measured proportions (the contention's
// part per category is in the description's `contention_in`); optimizer is the predicted
// optimizer; elementwise also holds the step's own copies, which the measured one-rank run does
// not run, and the contention on them; exposed_comm the schedule's waits. A measured run without a readable account gives
// none, and says why.
PredictedAccount predict_time_account(const MeasuredRun& run, const PredictedIteration& iteration,
                                      const PredictedFlops& flops);

}  // namespace tokbench::predict
