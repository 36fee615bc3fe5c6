// The words of the record's `unit_timings.clock` (docs/run.md, "Per-unit timings"): which clock
// timed the units. train::UnitClock writes them; predict's measured run reads the clock (a record
// without one was timed on the host). Here, below both, so that each word is spelled once.
#pragma once

namespace tokbench::parallel::unit_clock_key {

inline constexpr char host[] = "host";
inline constexpr char cuda_events[] = "cuda_events";

}  // namespace tokbench::parallel::unit_clock_key
