// The NCCL backend for CUDA ranks (compiled only with the CUDA toolkit: needs nccl.h and
// USE_C10D_NCCL, which the torch wheel's headers expect but do not define).
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>

#include "distributed/process_groups.hpp"

namespace tokbench::distributed {

c10::intrusive_ptr<c10d::Backend> make_nccl_backend(const c10::intrusive_ptr<c10d::Store>& store, int rank, int size,
                                                    std::chrono::milliseconds timeout) {
  auto options = c10d::ProcessGroupNCCL::Options::create();
  options->timeout = timeout;
  return c10::make_intrusive<c10d::ProcessGroupNCCL>(store, rank, size, options);
}

}  // namespace tokbench::distributed
