// The named ranges tokbench's code records (at::RecordFunction, USER_SCOPE) so that a profiled
// iteration can be read as a training step: one spelling here, used by the code that records
// them (model, train, distributed) and by the rules that classify them (op_rules.cpp). Without a profiler
// a range costs a thread-local check.
#pragma once

namespace tokbench::account::ranges {

// The loop's structure (train_loop.cpp, the steps).
inline constexpr const char* kIteration = "tokbench::iteration";  // one profiled iteration, end to end
inline constexpr const char* kData = "tokbench::data";            // drawing and copying the batch
inline constexpr const char* kForward = "forward";                // the names --profile's traces have used
inline constexpr const char* kBackward = "backward";
inline constexpr const char* kOptimizer = "optimizer";
// A distributed step waiting for a collective (distributed/exposed_comm.cpp): its time is exposed
// communication, and the account takes the step's own measure of it (time_account.hpp).
inline constexpr const char* kCommWait = "tokbench::comm_wait";
// A distributed step copying gradients into or out of a collective's flat buffer, and averaging
// them (distributed/ddp_step.cpp): elementwise work wherever it runs, so that DDP without
// overlap, which does it inside the optimizer's range, keeps optimizer for the optimizer.
inline constexpr const char* kCommBuffers = "tokbench::comm_buffers";

// Parts of the model (model/gpt.cpp) and of the executors (train/).
inline constexpr const char* kNorm = "tokbench::norm";            // one normalisation, any kind
inline constexpr const char* kAttention = "tokbench::attention";  // q·kᵀ, mask, softmax, ·v (SDPA or explicit)
inline constexpr const char* kLoss = "tokbench::loss";            // cross-entropy (and, fused, the chunked head)
inline constexpr const char* kLinear = "tokbench::linear";        // the fused executor's linear layer
inline constexpr const char* kRmsNormRows = "tokbench::rms_norm_rows";  // the fused RMSNorm row kernel
inline constexpr const char* kRmsNormRowsBackward = "tokbench::rms_norm_rows_backward";
inline constexpr const char* kLayerNormRows = "tokbench::layer_norm_rows";  // the fused LayerNorm (CUDA kernel)
inline constexpr const char* kLayerNormRowsBackward = "tokbench::layer_norm_rows_backward";
inline constexpr const char* kCrossEntropyRows = "tokbench::cross_entropy_rows";  // the fused loss row kernel

}  // namespace tokbench::account::ranges
