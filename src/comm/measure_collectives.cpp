// The measurement of collectives on one rank (measure_collectives.hpp).
#include "comm/measure_collectives.hpp"

#include <ATen/ATen.h>
#include <c10/core/StreamGuard.h>

#include <time.h>

#include <chrono>
#include <optional>
#include <stdexcept>

#include "comm/cuda_stream_timer.hpp"
#include "distributed/process_groups.hpp"

namespace tokbench::comm {
namespace {

at::ScalarType scalar_type(const std::string& dtype) {
  if (dtype == "bfloat16") return at::kBFloat16;
  if (dtype == "float16") return at::kHalf;
  return at::kFloat;
}

// all_reduce and broadcast work in place; the other two read one buffer and write another.
bool in_place(Collective c) { return c == Collective::all_reduce || c == Collective::broadcast; }

// Issues one collective. `on_calling_stream`: NCCL launches it on the calling thread's current
// stream (asyncOp false) instead of its own internal stream, so that the benchmark's
// communication stream, made current around the calls, carries it and its timing events.
c10::intrusive_ptr<c10d::Work> issue(c10d::Backend& world, Collective c, at::Tensor& input, at::Tensor& output,
                                     bool on_calling_stream) {
  switch (c) {
    case Collective::all_reduce: {
      std::vector<at::Tensor> tensors{input};
      c10d::AllreduceOptions options;
      options.asyncOp = !on_calling_stream;
      return world.allreduce(tensors, options);
    }
    case Collective::all_gather: {
      c10d::AllgatherOptions options;
      options.asyncOp = !on_calling_stream;
      return world._allgather_base(output, input, options);
    }
    case Collective::reduce_scatter: {
      c10d::ReduceScatterOptions options;
      options.asyncOp = !on_calling_stream;
      return world._reduce_scatter_base(output, input, options);
    }
    case Collective::broadcast: {
      std::vector<at::Tensor> tensors{input};
      c10d::BroadcastOptions options;
      options.rootRank = 0;
      options.asyncOp = !on_calling_stream;
      return world.broadcast(tensors, options);
    }
  }
  throw std::logic_error("unknown collective");
}

void run_once(c10d::Backend& world, Collective c, at::Tensor& input, at::Tensor& output, bool on_calling_stream) {
  // A synchronous NCCL collective may hand back no work at all: it is already ordered on the stream.
  if (auto work = issue(world, c, input, output, on_calling_stream)) work->wait();
}

// Every thread of this process (Gloo's workers, the calling thread), as the kernel counts it.
double process_cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

at::Tensor positions(int64_t first, int64_t count, const at::Tensor& like) {
  return at::arange(first, first + count, like.options().dtype(at::kLong));
}

// Runs the collective once on values whose result is known exactly, and compares. The values
// are small integers, exact in every dtype and in every order of summation:
//  * reductions: element g of the whole array gets 1 + g%7 from rank g%n and 8 from rank
//    (g+1)%n, zero from the others, so every element sums to 9 + g%7; a rank whose part is
//    lost, a part added twice or at the wrong place changes it;
//  * all_gather: rank r's element j is 1 + (7r + j) % 251, so each rank's part is its own;
//  * broadcast: the root's element j is 1 + j%251, every other rank starts from zeros.
bool check_once(c10d::Backend& world, Collective c, at::Tensor& input, at::Tensor& output, int64_t rank, int64_t n,
                bool on_calling_stream) {
  const auto as_input = [&input](const at::Tensor& values) { return values.to(input.scalar_type()); };
  at::Tensor expected;
  switch (c) {
    case Collective::all_reduce:
    case Collective::reduce_scatter: {
      const at::Tensor g = positions(0, input.numel(), input);
      const at::Tensor mine = at::where(g.remainder(n) == rank, 1 + g.remainder(7), 0) +
                              at::where((g + 1).remainder(n) == rank, 8, 0);
      input.copy_(as_input(mine));
      const int64_t first = c == Collective::reduce_scatter ? rank * output.numel() : 0;
      expected = as_input(9 + positions(first, output.numel(), output).remainder(7));
      break;
    }
    case Collective::all_gather: {
      input.copy_(as_input(1 + (7 * rank + positions(0, input.numel(), input)).remainder(251)));
      const at::Tensor p = positions(0, output.numel(), output);
      const at::Tensor owner = p.div(input.numel(), "floor");
      expected = as_input(1 + (7 * owner + p - owner * input.numel()).remainder(251));
      break;
    }
    case Collective::broadcast: {
      expected = as_input(1 + positions(0, input.numel(), input).remainder(251));
      if (rank == 0)
        input.copy_(expected);
      else
        input.zero_();
      break;
    }
  }
  if (!in_place(c)) output.fill_(-1);  // a collective that writes nothing cannot pass
  run_once(world, c, input, output, on_calling_stream);
  return at::equal(in_place(c) ? input : output, expected);
}

}  // namespace

std::vector<MeasuredPoint> measure_collectives(c10d::Backend& world, const c10::Device& device, const CommPlan& plan,
                                               const std::function<void(Collective)>& starting) {
  const int64_t rank = plan.env.rank, n = plan.world_size;
  const at::TensorOptions options = at::TensorOptions().dtype(scalar_type(plan.dtype)).device(device);
  const bool nccl = plan.backend == distributed::CommBackend::nccl;
  // On CUDA everything below runs on the benchmark's own stream, named here once: the buffers,
  // the checks, the collectives (NCCL launches synchronous ones on the current stream) and the
  // timing events.
  std::optional<CudaStreamTimer> timer;
  std::optional<c10::StreamGuard> on_timer_stream;
  if (device.is_cuda()) {
    timer.emplace(device.index());
    on_timer_stream.emplace(timer->stream());
  }
  std::vector<MeasuredPoint> points;
  for (Collective c : plan.collectives) {
    if (starting) starting(c);
    // One allocation per collective at the largest size; each size uses its leading elements.
    const SizePoint largest = size_point(c, plan.sizes.back(), plan.element_bytes, n);
    const BufferCounts most = buffer_counts(c, largest.count, n);
    at::Tensor input_buffer = at::empty({most.input}, options);
    at::Tensor output_buffer = in_place(c) ? input_buffer : at::empty({most.output}, options);
    for (int64_t requested : plan.sizes) {
      MeasuredPoint point;
      point.collective = c;
      point.size = size_point(c, requested, plan.element_bytes, n);
      if (point.size.count == 0) continue;  // too small to give every rank an element
      const BufferCounts counts = buffer_counts(c, point.size.count, n);
      at::Tensor input = input_buffer.narrow(0, 0, counts.input);
      at::Tensor output = in_place(c) ? input : output_buffer.narrow(0, 0, counts.output);
      point.correct = check_once(world, c, input, output, rank, n, nccl);
      // Zeros from here on: repeated in-place sums of anything else grow without bound
      // (to infinities in 16-bit types), and zeros cost the same to move and add.
      input.zero_();
      if (!in_place(c)) output.zero_();
      for (int64_t i = 0; i < plan.warmup_iters; ++i) run_once(world, c, input, output, nccl);
      // Every rank starts the measured iterations together, with nothing else queued.
      distributed::barrier(world, device);
      if (timer) {
        timer->prepare(static_cast<std::size_t>(plan.iters));
        timer->synchronize();
        for (int64_t i = 0; i < plan.iters; ++i) {
          timer->begin();
          run_once(world, c, input, output, nccl);
          timer->end();
        }
        timer->synchronize();  // after the timed iterations: the events are complete
        point.seconds = timer->take_seconds();
      } else {
        // The process's CPU time beside the wall time: how many cores the collective keeps busy.
        const double cpu_before = process_cpu_seconds();
        for (int64_t i = 0; i < plan.iters; ++i) {
          const auto start = std::chrono::steady_clock::now();
          run_once(world, c, input, output, nccl);
          point.seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
          point.wall_seconds += point.seconds.back();
        }
        point.cpu_seconds = process_cpu_seconds() - cpu_before;
      }
      points.push_back(std::move(point));
    }
  }
  return points;
}

void keep_slowest_rank(c10d::Backend& world, const c10::Device& device, std::vector<MeasuredPoint>& points) {
  if (points.empty()) return;
  const int64_t iters = static_cast<int64_t>(points.front().seconds.size());
  // One row per point: its iteration times, then 1 when its check failed on this rank.
  at::Tensor table = at::zeros({static_cast<int64_t>(points.size()), iters + 1}, at::TensorOptions().dtype(at::kDouble));
  auto cells = table.accessor<double, 2>();
  for (size_t p = 0; p < points.size(); ++p) {
    for (int64_t i = 0; i < iters; ++i) cells[p][i] = points[p].seconds.at(static_cast<size_t>(i));
    cells[p][iters] = points[p].correct ? 0.0 : 1.0;
  }
  // On a GPU the exchange runs on the device's current stream (it times nothing), and the copy
  // back to the host waits for it.
  std::vector<at::Tensor> tensors{table.to(device)};
  c10d::AllreduceOptions options;
  options.reduceOp = c10d::ReduceOp::MAX;
  world.allreduce(tensors, options)->wait();
  table = tensors.front().to(at::kCPU);  // waits for the reduction on a device's stream
  cells = table.accessor<double, 2>();
  for (size_t p = 0; p < points.size(); ++p) {
    for (int64_t i = 0; i < iters; ++i) points[p].seconds[static_cast<size_t>(i)] = cells[p][i];
    points[p].correct = cells[p][iters] == 0.0;
  }
  // The CPU and wall seconds are summed over the ranks: their ratio is the ranks' mean busy.
  at::Tensor busy = at::zeros({static_cast<int64_t>(points.size()), 2}, at::TensorOptions().dtype(at::kDouble));
  auto b = busy.accessor<double, 2>();
  for (size_t p = 0; p < points.size(); ++p) {
    b[p][0] = points[p].cpu_seconds;
    b[p][1] = points[p].wall_seconds;
  }
  std::vector<at::Tensor> sums{busy.to(device)};
  world.allreduce(sums)->wait();  // SUM, the default
  busy = sums.front().to(at::kCPU);
  b = busy.accessor<double, 2>();
  for (size_t p = 0; p < points.size(); ++p) {
    points[p].cpu_seconds = b[p][0];
    points[p].wall_seconds = b[p][1];
  }
}

}  // namespace tokbench::comm
