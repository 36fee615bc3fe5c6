// --cuda-graphs auto|on|off: whether the single-device step is captured once as a CUDA graph and
// replayed (train/cuda_graph_step.hpp). Decided here, before any work, from the resolved plan:
// `on` is refused with one line where capture is not possible, `auto` falls back to eager with
// the reason, which the record keeps (cuda_graphs_note). Plain C++: tested without a device.
#pragma once

#include <cstdint>
#include <string>

#include "run/run_options.hpp"

namespace tokbench::run {

struct RunPlan;

// Eager iterations on the capture stream before the capture (CUDA graphs need the lazy
// set-up — cuBLAS handles and workspaces, the optimizer's state, the allocator's blocks — done
// outside the capture), then the capture iteration itself: all of them inside the warm-up.
inline constexpr int64_t kCudaGraphEagerWarmups = 2;
inline constexpr int64_t kCudaGraphMinWarmupIters = kCudaGraphEagerWarmups + 1;

struct CudaGraphChoice {
  std::string mode = "auto";  // as given: auto | on | off
  bool on = false;            // the step will be captured
  // Why it is off (auto's fallback, or off as asked); when on, what a reader of the record
  // must know (the passes after the window run eagerly). "" for none.
  std::string note;
};

// The choice for a resolved plan (device, executor, distributed mode, iterations and passes
// known). Throws usage::UsageError (exit 2) for `on` where capture is not possible, one line:
// "--cuda-graphs on: REASON; valid: --cuda-graphs auto (falls back to eager) or off".
CudaGraphChoice resolve_cuda_graphs(const RunOptions& options, const RunPlan& plan);

// The record's top-level values: "on" when the step was captured, else "off"; the note, or the
// reason a capture was abandoned at run time (`runtime_fallback`, "" when none).
std::string cuda_graphs_state(const CudaGraphChoice& choice, const std::string& runtime_fallback);
std::string cuda_graphs_note(const CudaGraphChoice& choice, const std::string& runtime_fallback);

}  // namespace tokbench::run
