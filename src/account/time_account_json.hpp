// The time account in the run's JSON record (`time_account`, docs/time-account.md) and back:
// seconds per iteration and shares per category, the MFU each costs, the FLOPs and the peak
// they are measured against. Unknown figures are null; reading accepts what writing produces
// and names the first key it cannot read. Torch-free.
#pragma once

#include <nlohmann/json.hpp>

#include "account/time_account.hpp"

namespace tokbench::account {

nlohmann::ordered_json to_json(const TimeAccount& account);

// Throws std::invalid_argument naming the key that is missing or of the wrong type.
TimeAccount time_account_from_json(const nlohmann::ordered_json& json);

// The device timeline's figures (the record's `device` key; a rank record carries them too):
// null without them. Reading null gives none; a malformed object throws as above.
nlohmann::ordered_json to_json(const std::optional<DeviceFigures>& device);
std::optional<DeviceFigures> device_figures_from_json(const nlohmann::ordered_json& json);

}  // namespace tokbench::account
