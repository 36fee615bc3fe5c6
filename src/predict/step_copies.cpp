// The step's own copies (step_copies.hpp).
#include "predict/step_copies.hpp"

#include <algorithm>

namespace tokbench::predict {

int64_t step_copy_bytes(const CommPlan& plan, int64_t shard_size, bool gloo) {
  const int64_t s = std::max<int64_t>(1, shard_size);
  int64_t bytes = 0;
  for (const auto& c : plan.collectives) {
    const int64_t full = plan.layout.units.at(c.comm_unit).padded_bytes();
    const int64_t shard = full / s;
    int64_t each = 0, once = 0;  // per call, and per iteration
    switch (c.purpose) {
      case CommPurpose::ddp_bucket:  // gradients in, the bucket scaled by 1/W, the average back
        each = 3 * full;
        break;
      case CommPurpose::reduce_gradients:  // the zeroed flat gradient; this rank's part kept (or added)
        each = full + shard;
        once = shard;  // the shard gradient scaled by 1/W at the step
        break;
      case CommPurpose::gather_for_forward:
      case CommPurpose::gather_for_backward:  // Gloo: the full buffer zeroed, the shard copied in
        each = gloo ? full + shard : 0;
        break;
      case CommPurpose::refresh_parameters:  // Gloo: the full buffer zeroed around the shard it holds
        each = gloo ? full - shard : 0;
        break;
      case CommPurpose::reduce_across_replicas:  // in place
        break;
    }
    bytes += each * c.per_iteration + once;
  }
  return bytes;
}

}  // namespace tokbench::predict
