// Two run records explained against each other (`tokbench explain`, `tokbench sweep
// --explain-against`): their time accounts' difference (account/explanation.hpp), once the
// records are known to be two runs of one configuration. What may differ is how the step ran
// (the compiler, the executor, the distributed strategy, the build); what the work is may not:
// the model, its layers, the shape of a batch, the precision, the ranks and the device.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

#include "account/explanation.hpp"
#include "results/run_record.hpp"

namespace tokbench::results {

// The option that gives a run its time account, as refusals name it.
inline constexpr const char* kTimeAccountOption = "--time-account-iters";

// Throws std::invalid_argument (a usage error: exit 2) with one line when a record did not
// finish (status not ok), has no time account (naming the option that makes one), or the two
// differ in their configuration (naming the key and both values). `base_where` and `run_where`
// say where each record came from ("base.json"), for those lines.
account::Explanation explain_records(const RunRecord& base, const RunRecord& run, const std::string& base_where,
                                     const std::string& run_where);

// How a record is called in an explanation: its `compiler` (the name the user passed), with the
// executor when they differ; "run" when it has none; " predicted" after it for a prediction.
std::string run_label(const RunRecord& record);

}  // namespace tokbench::results
