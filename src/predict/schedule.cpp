// The simulated iteration (schedule.hpp).
#include "predict/schedule.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <deque>
#include <limits>
#include <map>
#include <stdexcept>

#include "parallel/strategy.hpp"

namespace tokbench::predict {
namespace {

// A compute clock and one communication stream, advanced together: while the rank computes beside
// a running collective, the compute proceeds at (1 - steal) of its rate and the collective at
// `comm_rate` of its own (CPU ranks share the cores both ways); while the compute waits, the
// collective runs at its full rate. Collectives run one at a time, in issue order.
class Timeline {
 public:
  Timeline(double steal, double comm_rate, ScheduleResult& result)
      : steal_(std::clamp(steal, 0.0, 1.0)), comm_rate_(std::clamp(comm_rate, kMinCommRate, 1.0)), r_(result) {}

  double now() const { return now_; }

  // `work` seconds of compute from now.
  void compute(double work) {
    const double start = now_;
    double remaining = std::max(0.0, work);
    const double rate = 1.0 - steal_;
    while (remaining > 0) {
      if (queue_.empty()) {
        now_ += remaining;
        break;
      }
      Running& head = queue_.front();
      // Which ends first at the shared rates: the compute or the running collective.
      const double compute_ends = rate > 0 ? remaining / rate : std::numeric_limits<double>::infinity();
      const double comm_ends = head.remaining / comm_rate_;
      if (compute_ends <= comm_ends) {
        now_ += compute_ends;
        head.remaining = std::max(0.0, head.remaining - compute_ends * comm_rate_);
        break;
      }
      now_ += comm_ends;
      remaining -= comm_ends * rate;
      finish_head();
    }
    r_.contention_seconds += (now_ - start) - std::max(0.0, work);
    r_.compute_seconds += std::max(0.0, work);
  }

  // The step's own copies: compute like the rest, counted apart too.
  void copy(double work) {
    if (!(work > 0)) return;
    const double contention_before = r_.contention_seconds;
    compute(work);
    r_.step_copy_seconds += work;
    r_.copy_contention_seconds += r_.contention_seconds - contention_before;
  }

  // Which of the plan's collectives the one issued as `issued` is.
  int64_t collective_of(int64_t issued) const { return r_.collectives.at(issued).collective; }

  // Issues collective `index` now; returns its place in the stream.
  int64_t issue(int64_t index, double seconds, int64_t micro) {
    const int64_t id = static_cast<int64_t>(r_.collectives.size());
    r_.collectives.push_back({index, micro, now_, queue_.empty() ? now_ : -1.0, -1.0});
    queue_.push_back({id, std::max(0.0, seconds)});
    r_.comm_seconds += seconds;
    return id;
  }

  // The compute waits until collective `issued` has finished; the stream runs at its full rate.
  void wait(int64_t issued) {
    const double start = now_;
    while (r_.collectives.at(issued).finished < 0 && !queue_.empty()) {
      now_ += queue_.front().remaining;
      finish_head();
    }
    r_.exposed_comm_seconds += now_ - start;
  }

  // Collectives no one waited for: their times as if nothing ran beside them (the iteration ends
  // at now()).
  void drain() {
    double t = now_;
    while (!queue_.empty()) {
      t += queue_.front().remaining;
      r_.collectives[queue_.front().id].finished = t;
      queue_.pop_front();
      if (!queue_.empty()) r_.collectives[queue_.front().id].started = t;
    }
  }

 private:
  // A collective's slowest rate beside compute (a guard: a stalled stream would never end).
  static constexpr double kMinCommRate = 1e-3;
  struct Running {
    int64_t id;        // index into r_.collectives
    double remaining;  // seconds left at its full rate
  };

  void finish_head() {
    r_.collectives[queue_.front().id].finished = now_;
    queue_.pop_front();
    if (!queue_.empty()) r_.collectives[queue_.front().id].started = now_;
  }

  double now_ = 0;
  double steal_, comm_rate_;
  std::deque<Running> queue_;
  ScheduleResult& r_;
};

// A collective issued and waited for with the step's copies around it (step_copies.hpp): those
// before its issue and after its wait run on the compute timeline.
class CopyingStream {
 public:
  CopyingStream(const ScheduleInput& in, Timeline& t) : in_(in), t_(t) {}
  int64_t issue(int64_t c, int64_t micro) {
    t_.copy(at(in_.copy_before_issue_seconds, c));
    return t_.issue(c, in_.collective_seconds[c], micro);
  }
  void wait(int64_t issued) {
    t_.wait(issued);
    t_.copy(at(in_.copy_after_wait_seconds, t_.collective_of(issued)));
  }

 private:
  static double at(const std::vector<double>& v, int64_t c) {
    return v.empty() ? 0.0 : v[static_cast<std::size_t>(c)];
  }
  const ScheduleInput& in_;
  Timeline& t_;
};

// The plan's collective for (unit, purpose), or -1 when the plan has none (a group of one).
class CollectiveIndex {
 public:
  explicit CollectiveIndex(const CommPlan& plan) {
    for (std::size_t i = 0; i < plan.collectives.size(); ++i)
      index_[{plan.collectives[i].comm_unit, plan.collectives[i].purpose}] = static_cast<int64_t>(i);
  }
  int64_t find(int64_t unit, CommPurpose purpose) const {
    const auto it = index_.find({unit, purpose});
    return it == index_.end() ? -1 : it->second;
  }

 private:
  std::map<std::pair<int64_t, CommPurpose>, int64_t> index_;
};

// DDP (ddp_step.cpp): buckets issued as their last gradient is accumulated, on syncing
// micro-batches; the optimizer step waits for every bucket in order.
void simulate_ddp(const ScheduleInput& in, Timeline& t) {
  CopyingStream stream(in, t);
  const int64_t n = static_cast<int64_t>(in.forward_seconds.size());
  const int64_t buckets = static_cast<int64_t>(in.plan.units.size());
  // Per timed unit, the buckets completed during its backward, by how far through it.
  std::vector<std::vector<std::pair<double, int64_t>>> ready(n);
  for (int64_t b = 0; b < buckets; ++b) ready[in.plan.units[b].ready_unit].push_back({in.plan.units[b].ready_fraction, b});
  for (auto& list : ready) std::stable_sort(list.begin(), list.end());
  std::vector<int64_t> issued(buckets, -1);
  // As the step: what backward did not launch, then each bucket waited for and copied back in turn.
  auto finish_all_reduce = [&](int64_t micro) {
    for (int64_t b = 0; b < buckets; ++b)
      if (issued[b] < 0) issued[b] = stream.issue(b, micro);
    for (int64_t b = 0; b < buckets; ++b) stream.wait(issued[b]);
    std::fill(issued.begin(), issued.end(), -1);
  };
  for (int64_t micro = 0; micro < in.grad_accum; ++micro) {
    const bool syncing = !in.ddp_skip_sync || micro == in.grad_accum - 1;
    for (int64_t u = 0; u < n; ++u) t.compute(in.forward_seconds[u]);
    std::vector<int64_t> backward_order{n - 1};
    for (int64_t u = n - 2; u >= 0; --u) backward_order.push_back(u);
    for (const int64_t u : backward_order) {
      double done = 0;
      if (syncing && in.ddp_overlap)
        for (const auto& [fraction, b] : ready[u]) {
          t.compute((fraction - done) * in.backward_seconds[u]);
          done = fraction;
          issued[b] = stream.issue(b, micro);
        }
      t.compute((1.0 - done) * in.backward_seconds[u]);
    }
    if (syncing && micro != in.grad_accum - 1) finish_all_reduce(micro);
  }
  finish_all_reduce(in.grad_accum - 1);
  t.copy(in.step_copy_seconds);
  t.compute(in.optimizer_seconds);
}

// FSDP (fsdp_step.cpp): reduce-scatter per unit after its backward, the one before it completed
// first (at most two in flight), the last at the micro-batch's end; ZeRO-3 gathers each block's
// units before its forward and backward with the next block's gathered ahead; hybrid all-reduces across replicas at the
// optimizer step; ZeRO-2 gathers the updated shards after it.
void simulate_fsdp(const ScheduleInput& in, Timeline& t) {
  CopyingStream stream(in, t);
  const int64_t n = static_cast<int64_t>(in.forward_seconds.size());
  const CommPlan& plan = in.plan;
  const int64_t units = static_cast<int64_t>(plan.units.size());
  const CollectiveIndex index(plan);
  const parallel::Zero3Gathers& gathers = plan.fsdp_gathers;
  std::vector<bool> gathered(units, !in.zero3);
  std::vector<bool> reduced(units, false);  // this micro-batch's gradients are on their way
  std::vector<int64_t> gathering(units, -1);
  std::deque<int64_t> in_flight;
  int64_t micro = 0;
  CommPurpose gather_purpose = CommPurpose::gather_for_forward;

  auto issue = [&](int64_t unit, CommPurpose purpose) -> int64_t {
    const int64_t c = index.find(unit, purpose);
    return c < 0 ? -1 : stream.issue(c, micro);
  };
  // As the step: backward skips a unit already reduced; the forward never meets one.
  auto start_gathers = [&](const std::vector<int64_t>& set) {
    for (const int64_t unit : set)
      if (!gathered[unit] && gathering[unit] < 0 && !reduced[unit]) gathering[unit] = issue(unit, gather_purpose);
  };
  auto ensure_gathered = [&](const std::vector<int64_t>& set) {
    start_gathers(set);
    for (const int64_t unit : set) {
      if (gathered[unit] || reduced[unit]) continue;
      if (gathering[unit] >= 0) stream.wait(gathering[unit]);
      gathering[unit] = -1;
      gathered[unit] = true;
    }
  };
  auto complete_reductions = [&](std::size_t keep) {
    while (in_flight.size() > keep) {
      stream.wait(in_flight.front());
      in_flight.pop_front();
    }
  };
  auto reduce_unit = [&](int64_t unit) {
    const int64_t id = issue(unit, CommPurpose::reduce_gradients);
    if (id >= 0) in_flight.push_back(id);
    reduced[unit] = true;
    if (in.zero3 && gathering[unit] >= 0) {  // a gather issued ahead lands before the buffer is freed
      stream.wait(gathering[unit]);
      gathering[unit] = -1;
    }
    if (in.zero3) gathered[unit] = false;  // backward is done with it: freed
    complete_reductions(1);
  };
  // A unit is reduced once its last gradient is in: after the backward of the timed unit, among
  // those its parameters lie in, that backward reaches last (the root's: the embedding's). Read
  // from the layout's parameters, since a size unit may hold part of a timed unit only.
  auto backward_position = [n](int64_t u) { return u == n - 1 ? 0 : n - 1 - u; };  // head first, embedding last
  std::vector<int64_t> last_in_backward(units, -1);
  for (int64_t k = 0; k < units; ++k)
    for (const int64_t i : plan.layout.units[k].parameters) {
      const int64_t u = plan.layout.parameters[i].timed_unit;
      int64_t& last = last_in_backward[k];
      if (last < 0 || backward_position(u) > backward_position(last)) last = u;
    }
  // The units whose gradients are complete after timed unit u's backward; the later-listed
  // first (an inner module's gradients are in before those of the block around it).
  auto reduce_after = [&](int64_t u) {
    for (int64_t k = units - 1; k >= 0; --k)
      if (last_in_backward[k] == u) reduce_unit(k);
  };

  // ZeRO-3's gathers and frees follow parallel::zero3_gathers, as fsdp_step.cpp does.
  for (micro = 0; micro < in.grad_accum; ++micro) {
    std::fill(reduced.begin(), reduced.end(), false);
    gather_purpose = CommPurpose::gather_for_forward;
    if (in.zero3) {
      ensure_gathered(gathers.kept);
      if (n > 2) start_gathers(gathers.needs[1]);
    }
    t.compute(in.forward_seconds[0]);
    for (int64_t u = 1; u + 1 < n; ++u) {
      if (in.zero3) {
        ensure_gathered(gathers.needs[u]);
        if (u + 2 < n) start_gathers(gathers.needs[u + 1]);
      }
      t.compute(in.forward_seconds[u]);
      if (in.zero3)
        for (const int64_t k : gathers.free_after_forward[u]) gathered[k] = false;  // freed after its forward
    }
    t.compute(in.forward_seconds[n - 1]);
    gather_purpose = CommPurpose::gather_for_backward;
    if (in.zero3) {
      for (const int64_t k : gathers.kept) gathered[k] = false;  // freed at the forward's end
      ensure_gathered(gathers.needs[n - 1]);                     // the hook on the logits' gradient
      start_gathers(gathers.needs[n - 2]);
    }
    t.compute(in.backward_seconds[n - 1]);
    reduce_after(n - 1);
    for (int64_t u = n - 2; u >= 0; --u) {
      if (in.zero3 && u >= 1) {  // the hook on the block's output gradient
        ensure_gathered(gathers.needs[u]);
        start_gathers(gathers.needs[u - 1]);
      }
      t.compute(in.backward_seconds[u]);
      reduce_after(u);
    }
    complete_reductions(0);
  }
  micro = in.grad_accum - 1;
  std::vector<int64_t> replica;
  for (int64_t k = 0; k < units; ++k)
    if (const int64_t id = issue(k, CommPurpose::reduce_across_replicas); id >= 0) replica.push_back(id);
  for (const int64_t id : replica) stream.wait(id);
  t.copy(in.step_copy_seconds);
  t.compute(in.optimizer_seconds);
  if (!in.zero3) {
    std::vector<int64_t> refresh;
    for (int64_t k = 0; k < units; ++k)
      if (const int64_t id = issue(k, CommPurpose::refresh_parameters); id >= 0) refresh.push_back(id);
    for (const int64_t id : refresh) stream.wait(id);
  }
}

}  // namespace

ScheduleResult simulate_iteration(const ScheduleInput& in) {
  const std::size_t n = in.forward_seconds.size();
  if (n < 2 || in.backward_seconds.size() != n)
    throw std::invalid_argument("schedule: forward and backward times of the same units (embedding, blocks, head) needed");
  if (in.collective_seconds.size() != in.plan.collectives.size())
    throw std::invalid_argument("schedule: one time per planned collective needed");
  if (in.grad_accum < 1) throw std::invalid_argument("schedule: GA must be >= 1");
  for (const auto* copies : {&in.copy_before_issue_seconds, &in.copy_after_wait_seconds})
    if (!copies->empty() && copies->size() != in.plan.collectives.size())
      throw std::invalid_argument("schedule: the copies around collectives need one time per planned collective");
  ScheduleResult result;
  Timeline timeline(in.comm_compute_steal, in.comm_rate_beside_compute, result);
  if (in.plan.collectives.empty()) {
    for (int64_t micro = 0; micro < in.grad_accum; ++micro)
      for (std::size_t u = 0; u < n; ++u) timeline.compute(in.forward_seconds[u] + in.backward_seconds[u]);
    timeline.compute(in.optimizer_seconds);
  } else if (parallel::mode_entry(in.strategy).layout == parallel::LayoutKind::ddp_buckets) {
    simulate_ddp(in, timeline);
  } else {
    simulate_fsdp(in, timeline);
  }
  result.optimizer_seconds = in.optimizer_seconds;
  result.iteration_seconds = timeline.now();
  timeline.drain();
  return result;
}

}  // namespace tokbench::predict
