// Stands in for nccl_backend.cpp where tokbench was built without the CUDA toolkit.
#include <stdexcept>

#include "distributed/process_groups.hpp"

namespace tokbench::distributed {

c10::intrusive_ptr<c10d::Backend> make_nccl_backend(const c10::intrusive_ptr<c10d::Store>&, int, int,
                                                    std::chrono::milliseconds) {
  throw std::runtime_error("this tokbench was built without CUDA, so it has no NCCL backend");
}

}  // namespace tokbench::distributed
