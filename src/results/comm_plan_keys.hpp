// The keys of a communication plan's JSON (comm_plan_json.hpp): results::comm_plan_json writes it
// into a run record's unit_timings.communication and a prediction's communication; predict adds
// each collective's time to its entries by these. A header of constants only.
#pragma once

namespace tokbench::results::comm_plan_key {

inline constexpr char bytes_per_iteration[] = "bytes_per_iteration";
inline constexpr char collectives[] = "collectives";

// collectives[]
inline constexpr char unit[] = "unit";
inline constexpr char purpose[] = "purpose";
inline constexpr char call[] = "call";
inline constexpr char group[] = "group";
inline constexpr char group_size[] = "group_size";
inline constexpr char bytes[] = "bytes";
inline constexpr char per_iteration[] = "per_iteration";

}  // namespace tokbench::results::comm_plan_key
