// Timing collectives on a GPU: CUDA events recorded on one communication stream that the
// benchmark takes from the device's stream pool itself, never the thread's current stream
// (which other code may have changed, or which is the device's default stream). The collectives
// are issued on the same stream (the caller makes it current around them with a
// c10::StreamGuard, which is how ProcessGroupNCCL is told where to launch a synchronous
// collective), so a begin/end pair of events brackets exactly the collectives between them.
// Only cuda_stream_timer.cpp includes CUDA headers; cuda_stream_timer_none.cpp stands in for
// builds without CUDA, whose constructor throws (resolution refuses --device cuda there first).
#pragma once

#include <c10/core/Stream.h>

#include <cstddef>
#include <memory>
#include <vector>

namespace tokbench::comm {

class CudaStreamTimer {
 public:
  // Takes a stream of `device_index` from its pool.
  explicit CudaStreamTimer(int device_index);
  ~CudaStreamTimer();
  CudaStreamTimer(const CudaStreamTimer&) = delete;
  CudaStreamTimer& operator=(const CudaStreamTimer&) = delete;

  // The communication stream, as a device-generic stream for a c10::StreamGuard.
  c10::Stream stream() const;
  // Creates the events of the next `intervals` intervals now, so that no event is created
  // (a driver call) between the collectives being timed.
  void prepare(std::size_t intervals);
  // Record an interval's start and end events on the communication stream (no host wait).
  void begin();
  void end();
  // Waits until the stream has done everything queued on it: call it outside timed regions only.
  void synchronize();
  // The recorded intervals in seconds, in order, and forgets them; after synchronize().
  std::vector<double> take_seconds();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tokbench::comm
