// FSDP's flat collectives (flat_collectives.hpp).
#include "distributed/flat_collectives.hpp"

#include <ATen/ATen.h>

#include <utility>
#include <vector>

namespace tokbench::distributed {
namespace {

// Gloo stages its reduce-scatter and all-gather through whole-buffer copies; its all-reduce
// works in place (flat_collectives.hpp).
bool through_all_reduce(const c10d::Backend& group) { return group.getBackendName() == "gloo"; }

}  // namespace

at::Tensor PendingReduceScatter::owned_part() const {
  return part.storage().is_alias_of(flat.storage()) ? part.clone() : part;
}

PendingReduceScatter start_reduce_scatter(c10d::Backend& group, at::Tensor flat, int64_t group_rank) {
  PendingReduceScatter r;
  const int64_t n = flat.numel() / group.getSize();
  if (through_all_reduce(group)) {
    std::vector<at::Tensor> one{flat};
    r.work = group.allreduce(one);
    r.part = flat.narrow(0, group_rank * n, n);
  } else {
    r.part = at::empty({n}, flat.options());
    r.work = group._reduce_scatter_base(r.part, flat);
  }
  r.flat = std::move(flat);
  return r;
}

c10::intrusive_ptr<c10d::Work> start_all_gather(c10d::Backend& group, at::Tensor& full, const at::Tensor& shard,
                                                int64_t group_rank) {
  const int64_t n = shard.numel(), begin = group_rank * n;
  if (through_all_reduce(group)) {
    if (shard.storage().is_alias_of(full.storage())) {  // in place: zero around this rank's slice
      TORCH_CHECK(shard.storage_offset() == full.storage_offset() + begin,
                  "start_all_gather: a shard inside the full buffer must be this rank's own slice");
      full.narrow(0, 0, begin).zero_();
      full.narrow(0, begin + n, full.numel() - begin - n).zero_();
    } else {
      full.zero_();
      full.narrow(0, begin, n).copy_(shard);
    }
    std::vector<at::Tensor> one{full};
    return group.allreduce(one);
  }
  at::Tensor input = shard;
  return group._allgather_base(full, input);
}

}  // namespace tokbench::distributed
