// The asynchronous stop agreement (stop_agreement.hpp).
#include "distributed/stop_agreement.hpp"

#include <ATen/ops/empty.h>
#include <ATen/ops/zeros.h>

namespace tokbench::distributed {

StopAgreement::StopAgreement(c10::intrusive_ptr<c10d::Backend> world, const c10::Device& device)
    : world_(std::move(world)), device_(device) {
  flag_ = at::zeros({1}, at::TensorOptions().device(device_).dtype(at::kFloat));
  host_flag_ = device_.is_cpu() ? flag_
                                : at::zeros({1}, at::TensorOptions().dtype(at::kFloat).pinned_memory(true));
}

StopAgreement::~StopAgreement() {
  // Every rank posted as many all-reduces as the others; the last one is still in flight.
  if (!pending_) return;
  try {
    pending_->wait();
  } catch (...) {  // a peer is gone: the run has already failed for it
  }
}

bool StopAgreement::operator()(bool local_stop_requested) {
  bool stop = false;
  if (pending_) {
    // Finished during the previous iteration: on the CPU this returns at once; on CUDA the
    // copy into host_flag_ was queued behind it on the same stream, and the previous
    // iteration's end synchronised the device, so the read below needs no further sync.
    pending_->wait();
    pending_.reset();
    stop = host_flag_.data_ptr<float>()[0] > 0;
  }
  ++calls_;
  if (stop) return true;
  flag_.fill_(local_stop_requested ? 1.0f : 0.0f);
  std::vector<at::Tensor> one{flag_};
  c10d::AllreduceOptions max;
  max.reduceOp = c10d::ReduceOp::MAX;
  pending_ = world_->allreduce(one, max);
  if (!device_.is_cpu()) {
    pending_->wait();  // with NCCL: the current stream waits for the collective; the host does not
    host_flag_.copy_(flag_, /*non_blocking=*/true);
  }
  return false;
}

}  // namespace tokbench::distributed
