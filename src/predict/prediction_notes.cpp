// The print format's lines under a prediction's tables (prediction_notes.hpp).
#include "predict/prediction_notes.hpp"

#include <cmath>
#include <string>

#include <fmt/format.h>

#include "account/time_account_keys.hpp"
#include "account/category.hpp"
#include "predict/prediction_keys.hpp"
#include "results/record_keys.hpp"

namespace tokbench::predict {

namespace pk = prediction_key;

namespace {

using record_json = nlohmann::json;

double number_in(const record_json& j, const char* key) {
  const auto it = j.find(key);
  return it != j.end() && it->is_number() ? it->get<double>() : 0.0;
}

std::string text_in(const record_json& j, const char* key) {
  const auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// Where the machine's speed differed between the run and the comm document by more than
// kMomentNoteAt, say which of the two moments the prediction is of: a run measured later is
// another machine state (docs/predict.md, "The compute's level").
constexpr double kMomentNoteAt = 0.05;

std::string moment_note(const record_json& level) {
  const bool applied = level.value(pk::applied, false);
  const double ratio = number_in(level, applied ? pk::scale : pk::comm_over_run);
  if (ratio <= 0 || std::abs(ratio - 1) < kMomentNoteAt) return "";
  const std::string head = fmt::format(
      "# The reference GEMM took {:.2f} ms in the comm document and {:.2f} ms beside the run: the machine was {:.0f}% {} "
      "when the document was measured",
      number_in(level, pk::comm_alone_ms), number_in(level, pk::run_probe_median_ms), 100 * std::abs(ratio - 1),
      ratio > 1 ? "slower" : "faster");
  if (applied)
    return head + fmt::format(", and the prediction is of that moment (the run's compute x {:.3f}, "
                              "prediction.reference_level); compare it with a run measured right after a comm document\n",
                              ratio);
  return head + "; the prediction is of the run's moment (--compute-level comm-document carries it to the document's)\n";
}

std::string notes_of(const record_json& record) {
  const record_json prediction = record.value(results::key::prediction, record_json::object());
  const record_json source = prediction.value(pk::source, record_json::object());
  std::string out = fmt::format("# From {}: {:.2f} ms per iteration", text_in(source, pk::record),
                                number_in(record, results::key::average_iter_time));
  const record_json interval = prediction.value(pk::interval_ms, record_json());
  const record_json spread = prediction.value(pk::input_spread, record_json::object());
  if (interval.is_object()) {
    out += fmt::format(", {:.2f} to {:.2f} ms by the measured run's spread ({} iterations: median {:.2f} ms, "
                       "quartiles {:.2f} to {:.2f} ms)",
                       number_in(interval, pk::low), number_in(interval, pk::high), spread.value(pk::measured_iterations, 0),
                       number_in(spread, pk::median_ms), number_in(spread, pk::q1_ms), number_in(spread, pk::q3_ms));
    // The other sources the interval adds in quadrature (a comm document's), each side's width.
    const record_json parts = interval.value(pk::parts, record_json::array());
    for (std::size_t i = 1; parts.is_array() && i < parts.size(); ++i)
      out += fmt::format("{} {} -{:.2f}/+{:.2f} ms", i == 1 ? " and" : ",", text_in(parts[i], pk::from),
                         number_in(parts[i], pk::below_ms), number_in(parts[i], pk::above_ms));
    out += "\n";
  } else
    out += fmt::format("; no interval: {}\n", text_in(spread, pk::why));
  out += moment_note(prediction.value(pk::reference_level, record_json::object()));
  // A GPU prediction's cpu_contention is null.
  const record_json sharing = prediction.value(pk::cpu_contention, record_json());
  const record_json budget = sharing.is_object() ? sharing.value(pk::cores_budget, record_json()) : record_json();
  const record_json out_of_step = sharing.is_object() ? sharing.value(pk::ranks_out_of_step, record_json()) : record_json();
  if (budget.is_object() && out_of_step.is_object()) {
    // The record's figures say which end the prediction took, as the assumption's text does: a
    // budget at or above the lockstep is no lower end and leaves the lockstep's iteration.
    const double lockstep_ms = number_in(out_of_step, pk::lockstep_iteration_ms);
    const double predicted_ms = number_in(out_of_step, pk::iteration_ms);
    out += fmt::format("# Ranks time-slice the cores: in lockstep, idle while they wait, the iteration is {:.2f} ms; "
                       "with every core kept busy, as ranks out of step keep them, {:.2f} ms "
                       "(prediction.cpu_contention.cores_budget). {}\n",
                       lockstep_ms, number_in(budget, pk::iteration_ms),
                       predicted_ms < lockstep_ms
                           ? fmt::format("The prediction is their midpoint, {:.2f} ms", predicted_ms)
                           : std::string("The budget is no lower end here: the prediction is the lockstep's"));
  }
  const record_json predicted_account = record.value(results::key::time_account, record_json());
  if (!predicted_account.is_object()) {
    out += fmt::format("# No time account: {}\n",
                       text_in(prediction.value(pk::time_account, record_json::object()), pk::why));
    return out;
  }
  std::string parts;
  const record_json categories = predicted_account.value(account::time_account_key::categories, record_json::object());
  for (const account::Category c : account::all_categories()) {
    const record_json entry = categories.value(std::string(account::json_name(c)), record_json::object());
    parts += fmt::format("{}{} {:.2f}", parts.empty() ? "" : ", ", account::label(c), number_in(entry, account::time_account_key::s) * 1e3);
  }
  const double contention = number_in(prediction.value(pk::time_account, record_json::object()), pk::contention_ms);
  if (contention > 0) parts += fmt::format(" (of these, CPU contention {:.2f}, spread over the forward and backward categories)", contention);
  out += fmt::format("# Its time account (ms per iteration): {}; tokbench explain PREDICTION.json MEASURED.json "
                     "compares it with a measured run\n",
                     parts);
  return out;
}

}  // namespace

std::string prediction_notes(const std::vector<record_json>& records) {
  std::string out;
  for (const auto& record : records) out += notes_of(record);
  return out;
}

}  // namespace tokbench::predict
