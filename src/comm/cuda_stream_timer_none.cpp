// cuda_stream_timer.hpp for builds without CUDA: a GPU benchmark cannot start (resolution has
// already refused --device cuda, as no CUDA device is usable in such a build).
#include <stdexcept>

#include "comm/cuda_stream_timer.hpp"

namespace tokbench::comm {

struct CudaStreamTimer::Impl {};

CudaStreamTimer::CudaStreamTimer(int) {
  throw std::runtime_error("timing collectives on a GPU needs CUDA, and this tokbench was built without CUDA support");
}
CudaStreamTimer::~CudaStreamTimer() = default;
c10::Stream CudaStreamTimer::stream() const { return c10::Stream(c10::Stream::DEFAULT, c10::Device(c10::kCPU)); }
void CudaStreamTimer::prepare(std::size_t) {}
void CudaStreamTimer::begin() {}
void CudaStreamTimer::end() {}
void CudaStreamTimer::synchronize() {}
std::vector<double> CudaStreamTimer::take_seconds() { return {}; }

}  // namespace tokbench::comm
