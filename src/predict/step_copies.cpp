// The step's own copies and fills (step_copies.hpp).
#include "predict/step_copies.hpp"

#include <algorithm>

namespace tokbench::predict {

PlacedCopyBytes placed_copy_bytes(const CommPlan& plan, int64_t shard_size, bool gloo) {
  const int64_t s = std::max<int64_t>(1, shard_size);
  PlacedCopyBytes bytes;
  for (const auto& c : plan.collectives) {
    const int64_t full = plan.layout.units.at(c.comm_unit).padded_bytes();
    const int64_t shard = full / s;
    StepCopyBytes before, after;
    switch (c.purpose) {
      case CommPurpose::ddp_bucket:  // gradients in; after it, the bucket scaled by 1/W and the average back
        before.copied = full;
        after.copied = 2 * full;
        break;
      case CommPurpose::reduce_gradients:  // the flat gradient zeroed; after it, this rank's part kept (or added)
        before.filled = full;
        // Autograd accumulates each gradient into the zeroed flat gradient's views; a one-rank
        // run accumulates in place too from its second micro-batch on, but takes its first's
        // result as the gradient: one pass over the full gradient per iteration beyond it,
        // spread over the iteration's calls.
        before.added = full / std::max<int64_t>(1, c.per_iteration);
        after.copied = shard;
        bytes.at_step.copied += shard;  // the shard gradient scaled by 1/W at the step
        break;
      case CommPurpose::gather_for_forward:
      case CommPurpose::gather_for_backward:  // Gloo: the full buffer zeroed, the shard copied in
        before.filled = gloo ? full : 0;
        before.copied = gloo ? shard : 0;
        break;
      case CommPurpose::refresh_parameters:  // Gloo: the full buffer zeroed around the shard it holds
        before.filled = gloo ? full - shard : 0;
        break;
      case CommPurpose::reduce_across_replicas:  // in place
        break;
    }
    bytes.before_issue.push_back(before);
    bytes.after_wait.push_back(after);
  }
  return bytes;
}

StepCopyBytes PlacedCopyBytes::per_iteration(const CommPlan& plan) const {
  StepCopyBytes total = at_step;
  for (std::size_t i = 0; i < plan.collectives.size() && i < before_issue.size(); ++i)
    for (int64_t call = 0; call < plan.collectives[i].per_iteration; ++call) {
      total += before_issue[i];
      total += after_wait[i];
    }
  return total;
}

}  // namespace tokbench::predict
