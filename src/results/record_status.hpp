// The statuses of a result record whose figures are to be read: a run that finished ("ok"), and
// a prediction (`tokbench predict`: "predicted"), which holds the same figures, modelled rather
// than measured. Every other status (oom, nan, error, timeout, invalid, ...) is a run that gave
// no figures, shown by its status. Torch-free.
#pragma once

#include <string_view>

namespace tokbench::results {

inline constexpr std::string_view kStatusOk = "ok";
inline constexpr std::string_view kStatusPredicted = "predicted";

// Whether a record of `status` holds figures tables show as numbers.
inline bool holds_figures(std::string_view status) { return status == kStatusOk || status == kStatusPredicted; }

}  // namespace tokbench::results
