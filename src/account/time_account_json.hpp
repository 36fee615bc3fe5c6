// The time account in the run's JSON record (`time_account`, docs/time-account.md) and back:
// seconds per iteration and shares per category, the MFU each costs, the FLOPs and the peak
// they are measured against. Unknown figures are null; reading accepts what writing produces
// and names the first key it cannot read. Torch-free.
#pragma once

#include <nlohmann/json.hpp>

#include "account/time_account.hpp"

namespace tokbench::account {

nlohmann::ordered_json to_json(const TimeAccount& account);

// The reader's bounds on an account's values: every time at most this many seconds, and the sums
// make_time_account makes exact (categories to the iteration, shares to 1) within this fraction
// (rounding leaves ~1e-15; a record edited by hand or damaged leaves more).
inline constexpr double kMaxAccountSeconds = 1e9;
inline constexpr double kAccountSumTolerance = 1e-3;

// Throws std::invalid_argument naming the key that is missing or of the wrong type, or whose
// value no account has (a negative or non-finite time, a share outside [0, 1], categories that
// do not sum to the iteration within kAccountSumTolerance).
TimeAccount time_account_from_json(const nlohmann::ordered_json& json);

// The device timeline's figures (the record's `device` key; a rank record carries them too):
// null without them. Reading null gives none; a malformed object throws as above.
nlohmann::ordered_json to_json(const std::optional<DeviceFigures>& device);
std::optional<DeviceFigures> device_figures_from_json(const nlohmann::ordered_json& json);

}  // namespace tokbench::account
