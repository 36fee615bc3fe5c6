// The step's own copies and fills (step_copies.hpp).
#include "predict/step_copies.hpp"

#include <algorithm>

namespace tokbench::predict {

StepCopyBytes step_copy_bytes(const CommPlan& plan, int64_t shard_size, bool gloo) {
  const int64_t s = std::max<int64_t>(1, shard_size);
  StepCopyBytes bytes;
  for (const auto& c : plan.collectives) {
    const int64_t full = plan.layout.units.at(c.comm_unit).padded_bytes();
    const int64_t shard = full / s;
    int64_t copy_each = 0, fill_each = 0, copy_once = 0;  // per call, and per iteration
    switch (c.purpose) {
      case CommPurpose::ddp_bucket:  // gradients in, the bucket scaled by 1/W, the average back
        copy_each = 3 * full;
        break;
      case CommPurpose::reduce_gradients:  // the flat gradient zeroed; this rank's part kept (or added)
        fill_each = full;
        copy_each = shard;
        copy_once = shard;  // the shard gradient scaled by 1/W at the step
        break;
      case CommPurpose::gather_for_forward:
      case CommPurpose::gather_for_backward:  // Gloo: the full buffer zeroed, the shard copied in
        fill_each = gloo ? full : 0;
        copy_each = gloo ? shard : 0;
        break;
      case CommPurpose::refresh_parameters:  // Gloo: the full buffer zeroed around the shard it holds
        fill_each = gloo ? full - shard : 0;
        break;
      case CommPurpose::reduce_across_replicas:  // in place
        break;
    }
    bytes.copied += copy_each * c.per_iteration + copy_once;
    bytes.filled += fill_each * c.per_iteration;
  }
  return bytes;
}

}  // namespace tokbench::predict
