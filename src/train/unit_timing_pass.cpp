// The per-unit timing pass (unit_timing_pass.hpp).
#include "train/unit_timing_pass.hpp"

#include <torch/cuda.h>
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <stdexcept>
#include <string>
#include <unordered_set>

#include "train/parameter_shapes.hpp"
#include "train/unit_clock.hpp"
#include "train/unit_timing_hooks.hpp"

namespace tokbench::train {
namespace {

using Clock = std::chrono::steady_clock;

// On CUDA the marks of a micro-batch are events, readable only once the device has passed
// them; they are read at each iteration's end, and also every this many micro-batches (a
// synchronisation inside the pass, never inside the timed window), so that a large GA does not
// hold GA × (3·n_layer + 5) events at once.
constexpr std::size_t kMaxUnreadMicroBatches = 64;

void synchronize(const c10::Device& device) {
  if (device.is_cuda()) torch::cuda::synchronize(device.has_index() ? device.index() : -1);
}

// Each unit's own parameters, in unit order (embedding, blocks, head), each parameter counted
// once: in the first unit holding it, should a model share one between units (litgpt's models
// do not tie the head to the embedding; a tied weight would count in the embedding).
std::vector<int64_t> unit_parameters(const model::GPT& model) {
  std::unordered_set<const c10::TensorImpl*> counted;
  auto count = [&](const std::vector<std::shared_ptr<torch::nn::Module>>& modules) {
    int64_t n = 0;
    for (const auto& module : modules)
      for (const auto& p : module->parameters())
        if (counted.insert(p.unsafeGetTensorImpl()).second) n += p.numel();
    return n;
  };
  const auto roots = model->root_modules();  // the embedding, the final norm, the head
  std::vector<int64_t> counts{count({roots.front()})};
  for (const auto& block : model->blocks()) counts.push_back(count({block}));
  counts.push_back(count({roots.begin() + 1, roots.end()}));
  return counts;
}

// Forward and backward seconds summed per unit over the micro-batches read so far.
class UnitSums {
 public:
  explicit UnitSums(int64_t n_layer)
      : n_layer_(n_layer), forward_(static_cast<std::size_t>(n_layer + 2), 0.0),
        backward_(static_cast<std::size_t>(n_layer + 2), 0.0) {}

  void add(const MicroBatchMarks& m, const UnitClock& clock) {
    const int64_t n = n_layer_;
    auto at = [&](int64_t mark, const std::string& what) {
      if (mark < 0) throw std::runtime_error("per-unit timing: " + what + " was never reached");
      return mark;
    };
    auto block_name = [](int64_t l) { return "block " + std::to_string(l); };
    auto between = [&](int64_t from, int64_t to) { return clock.seconds_between(from, to); };
    const int64_t forward_start = at(m.forward_start, "the forward's start");
    const int64_t embedding_end = at(m.embedding_end, "the embedding's end");
    const int64_t forward_end = at(m.forward_end, "the loss (the forward's end)");
    const int64_t embedding_grad = at(m.embedding_grad, "the gradient of the first block's input");
    const int64_t backward_end = at(m.backward_end, "the backward's end");
    forward_[0] += between(forward_start, embedding_end);
    backward_[0] += between(embedding_grad, backward_end);
    int64_t last_forward = embedding_end;  // where the head's forward begins
    int64_t head_backward_end = embedding_grad;
    for (int64_t l = 0; l < n; ++l) {
      const auto i = static_cast<std::size_t>(l);
      const int64_t start = at(m.block_start[i], block_name(l) + "'s forward start");
      const int64_t end = at(m.block_end[i], block_name(l) + "'s forward end");
      const int64_t grad_out = at(m.output_grad[i], "the gradient of " + block_name(l) + "'s output");
      const int64_t grad_in = l == 0 ? embedding_grad : at(m.output_grad[i - 1], "the gradient of " + block_name(l - 1) + "'s output");
      forward_[i + 1] += between(start, end);
      backward_[i + 1] += between(grad_out, grad_in);
      last_forward = end;
      head_backward_end = grad_out;
    }
    forward_.back() += between(last_forward, forward_end);
    backward_.back() += between(forward_end, head_backward_end);
  }

  double forward(std::size_t unit) const { return forward_[unit]; }
  double backward(std::size_t unit) const { return backward_[unit]; }

 private:
  int64_t n_layer_;
  std::vector<double> forward_, backward_;
};

// The median of the iterations' figures (the mean of the middle two for an even count, so two
// iterations give their mean).
double median_of(std::vector<double> v) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// The step's forward-end callback for the pass's duration: the head's forward ends there.
struct ForwardEndMark {
  ForwardEndMark(TrainStep& s, const std::shared_ptr<UnitMarks>& marks) : step(s) {
    step.set_forward_end_callback([marks] { marks->mark(&MicroBatchMarks::forward_end); });
  }
  ~ForwardEndMark() { step.set_forward_end_callback({}); }
  TrainStep& step;
};

}  // namespace

std::optional<UnitTimings> measure_unit_timings(TrainStep& step, TokenBatcher& data, const c10::Device& device,
                                                int64_t grad_accum, int64_t iterations,
                                                const std::function<bool()>& stop) {
  if (iterations < 1) return std::nullopt;
  model::GPT model = step.model();
  const int64_t n_layer = static_cast<int64_t>(model->blocks().size());
  UnitClock clock(device);
  auto marks = std::make_shared<UnitMarks>(clock, n_layer);
  const ScopedUnitTimingHooks hooks(model, marks);
  const ForwardEndMark forward_end(step, marks);

  UnitSums sums(n_layer);
  auto read_marks = [&] {
    for (const auto& m : marks->take()) sums.add(m, clock);
  };
  // Each iteration's figures, so the pass reports their medians: a neighbour on the host that
  // holds a core for one iteration of five (seen: one pass's optimizer at 0.71 s per iteration
  // on average where the other runs' took 0.07) then moves nothing.
  std::vector<double> iteration_seconds, optimizer_seconds;
  std::vector<std::vector<double>> forward_seconds(static_cast<std::size_t>(n_layer + 2)),
      backward_seconds(static_cast<std::size_t>(n_layer + 2));
  std::vector<double> forward_before(forward_seconds.size(), 0.0), backward_before(backward_seconds.size(), 0.0);
  double exposed_comm_seconds = 0;
  synchronize(device);  // what is still queued belongs to the measured loop, not the pass
  step.take_exposed_comm_seconds();
  for (int64_t i = 0; i < iterations; ++i) {
    if (stop && stop()) return std::nullopt;
    const Clock::time_point start = Clock::now();
    at::Tensor loss;
    for (int64_t micro = 0; micro < grad_accum; ++micro) {
      const TokenBatch batch = data.next();
      marks->start_micro_batch();
      loss = step.forward_backward(batch, micro, grad_accum);
      marks->mark(&MicroBatchMarks::backward_end);
      const bool flush = !clock.readable_at_once() && marks->pending() >= kMaxUnreadMicroBatches;
      if (flush) synchronize(device);
      if (clock.readable_at_once() || flush) {
        read_marks();
        clock.forget();
      }
    }
    const int64_t optimizer_start = clock.mark();
    step.optimizer_step(loss);
    const int64_t optimizer_end = clock.mark();
    synchronize(device);
    iteration_seconds.push_back(std::chrono::duration<double>(Clock::now() - start).count());
    read_marks();  // every mark of the iteration is read by now
    optimizer_seconds.push_back(clock.seconds_between(optimizer_start, optimizer_end));
    clock.forget();
    exposed_comm_seconds += step.take_exposed_comm_seconds();
    for (std::size_t u = 0; u < forward_seconds.size(); ++u) {
      forward_seconds[u].push_back((sums.forward(u) - forward_before[u]) / static_cast<double>(grad_accum));
      backward_seconds[u].push_back((sums.backward(u) - backward_before[u]) / static_cast<double>(grad_accum));
      forward_before[u] = sums.forward(u);
      backward_before[u] = sums.backward(u);
    }
  }

  UnitTimings t;
  t.iterations = iterations;
  t.clock = clock.name();
  t.micro_batches_per_iteration = grad_accum;
  t.iteration_seconds = median_of(iteration_seconds);
  t.exposed_comm_seconds = exposed_comm_seconds / static_cast<double>(iterations);
  t.optimizer_seconds = median_of(optimizer_seconds);
  t.parameter_shapes = parameter_shapes(model);
  if (const parallel::Layout* layout = step.comm_layout()) t.comm_layout = *layout;
  const std::vector<int64_t> parameters = unit_parameters(model);
  int64_t total_parameters = 0;
  for (const int64_t p : parameters) total_parameters += p;
  for (std::size_t u = 0; u < parameters.size(); ++u) {
    UnitTiming unit;
    if (u == 0) {
      unit.name = unit.kind = "embedding";
    } else if (u + 1 == parameters.size()) {
      unit.name = unit.kind = "head";
    } else {
      unit.name = "block." + std::to_string(u - 1);
      unit.kind = "block";
    }
    unit.parameters = parameters[u];
    unit.forward_seconds = median_of(forward_seconds[u]);
    unit.backward_seconds = median_of(backward_seconds[u]);
    unit.optimizer_seconds = total_parameters > 0 ? t.optimizer_seconds * static_cast<double>(parameters[u]) /
                                                        static_cast<double>(total_parameters)
                                                  : 0.0;
    t.units.push_back(std::move(unit));
  }
  return t;
}

}  // namespace tokbench::train
