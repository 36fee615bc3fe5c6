// CUDA implementation of cuda_stream_timer.hpp: a pool stream and timing events
// (at::cuda::CUDAEvent with cudaEventDefault; its default flags disable timing). Compiled only
// with TOKBENCH_CUDA_ENABLED; it builds without a GPU.
#include "comm/cuda_stream_timer.hpp"

#include <ATen/cuda/CUDAEvent.h>
#include <c10/cuda/CUDAStream.h>

#include <utility>

namespace tokbench::comm {

struct CudaStreamTimer::Impl {
  explicit Impl(c10::DeviceIndex device) : stream(c10::cuda::getStreamFromPool(/*isHighPriority=*/false, device)) {}
  c10::cuda::CUDAStream stream;
  std::vector<std::pair<at::cuda::CUDAEvent, at::cuda::CUDAEvent>> intervals;
  std::size_t used = 0;  // intervals begun since the last take_seconds()

  std::pair<at::cuda::CUDAEvent, at::cuda::CUDAEvent>& next() {
    if (used == intervals.size()) intervals.emplace_back(at::cuda::CUDAEvent(cudaEventDefault),
                                                         at::cuda::CUDAEvent(cudaEventDefault));
    return intervals[used];
  }
};

CudaStreamTimer::CudaStreamTimer(int device_index)
    : impl_(std::make_unique<Impl>(static_cast<c10::DeviceIndex>(device_index))) {}

CudaStreamTimer::~CudaStreamTimer() = default;

c10::Stream CudaStreamTimer::stream() const { return impl_->stream.unwrap(); }

void CudaStreamTimer::prepare(std::size_t intervals) {
  // A CUDAEvent creates its CUDA event when first recorded: record each once on the stream.
  while (impl_->intervals.size() < impl_->used + intervals) {
    auto& pair = impl_->intervals.emplace_back(at::cuda::CUDAEvent(cudaEventDefault),
                                               at::cuda::CUDAEvent(cudaEventDefault));
    pair.first.record(impl_->stream);
    pair.second.record(impl_->stream);
  }
}

void CudaStreamTimer::begin() { impl_->next().first.record(impl_->stream); }  // on the communication stream, by name

void CudaStreamTimer::end() { impl_->intervals[impl_->used++].second.record(impl_->stream); }

void CudaStreamTimer::synchronize() { impl_->stream.synchronize(); }

std::vector<double> CudaStreamTimer::take_seconds() {
  std::vector<double> seconds;
  seconds.reserve(impl_->used);
  for (std::size_t i = 0; i < impl_->used; ++i) {
    auto& [start, stop] = impl_->intervals[i];
    seconds.push_back(static_cast<double>(start.elapsed_time(stop)) / 1e3);  // ms
  }
  impl_->used = 0;
  return seconds;
}

}  // namespace tokbench::comm
