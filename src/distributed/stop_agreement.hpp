// The ranks' shared stop decision (train_loop.hpp's StopDecision): one rank's stop request
// stops every rank at the same iteration boundary, since a rank leaving alone would leave
// the others waiting in a collective.
//
// Why asynchronous: a blocking all-reduce at each iteration start, read with `.item()`, is a
// host synchronisation inside the timed window (on CUDA it also waits for the device). Here
// each call posts this iteration's flag with a non-blocking MAX all-reduce and decides on the
// previous call's, which finished during the previous iteration (its end synchronises the
// device). Every rank calls once per iteration, so every rank decides on the same flags: the
// stop lands one iteration after the request, on all ranks alike.
#pragma once

#include <c10/core/Device.h>
#include <torch/csrc/distributed/c10d/Backend.hpp>

namespace tokbench::distributed {

class StopAgreement {
 public:
  // `device`: where `world`'s collectives take tensors (the rank's own device for NCCL).
  StopAgreement(c10::intrusive_ptr<c10d::Backend> world, const c10::Device& device);
  ~StopAgreement();
  StopAgreement(const StopAgreement&) = delete;
  StopAgreement& operator=(const StopAgreement&) = delete;

  // Posts `local_stop_requested`; true when some rank had posted a request by the previous
  // call. The first call returns false.
  bool operator()(bool local_stop_requested);

  // How many calls have been made (the tests' view of the one-call lag).
  int64_t calls() const { return calls_; }

 private:
  c10::intrusive_ptr<c10d::Backend> world_;
  c10::Device device_;
  c10::intrusive_ptr<c10d::Work> pending_;  // the previous call's all-reduce
  at::Tensor flag_;                         // (1,) fp32 on device_: the collective's buffer
  at::Tensor host_flag_;                    // (1,) fp32 on the CPU (pinned on CUDA): its result
  int64_t calls_ = 0;
};

}  // namespace tokbench::distributed
