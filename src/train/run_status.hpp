// How a training run ended. Kept free of LibTorch so the torch-free parts of the bench layer
// (metrics, report, JSON) can name a run's status without including the training loop.
#pragma once

namespace tokbench::train {

enum class RunStatus { ok, oom, nan, interrupted, error };
const char* to_string(RunStatus status);  // "ok", "oom", "nan", "interrupted", "error"

}  // namespace tokbench::train
