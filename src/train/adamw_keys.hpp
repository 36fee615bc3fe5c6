// The words that name tokbench's two AdamW implementations (optimizer.hpp) where a document says
// which one ran: the AdamW cost probe's `method` (optimizer_probe.cpp), which predict's probe
// document carries. "fused" is torch.optim.AdamW's argument, not tokbench's fused executor.
#pragma once

namespace tokbench::train::adamw_key {

inline constexpr char fused[] = "fused";
inline constexpr char per_parameter[] = "per-parameter";

}  // namespace tokbench::train::adamw_key
