// Self-time attribution of a profiled pass's events (profiled_pass.hpp).
#include "account/profiled_pass.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <unordered_map>

#include "account/intervals.hpp"
#include "account/op_rules.hpp"
#include "account/range_names.hpp"

namespace tokbench::account {
namespace {

// An open event on the walk: what its children inherit and how much of it they cover.
struct Open {
  int64_t end_ns = 0;
  Category category = Category::other;
  std::optional<Category> context;  // what a weak or unnamed child becomes
  bool inside_counted_matmul = false;
  int64_t children_ns = 0;
  int64_t duration_ns = 0;
  const std::string* name = nullptr;
  bool holds_gaps = false;    // a named range or an autograd node: its self time is the loop waiting or idle
  int64_t gap_start_ns = 0;   // where its current gap began: its start, or its last child's end
  int64_t gap_in_flight_ns = 0;  // its gaps' nanoseconds while a collective was in flight
};

struct Classified {
  Category category = Category::other;
  std::optional<Category> child_context;
};

class Walk {
 public:
  Classified classify(const ProfiledEvent& e, const Open* parent) {
    const std::optional<Category> inherited = parent ? parent->context : std::nullopt;
    const Category parents = parent ? parent->category : Category::other;
    // A distributed step's wait for a collective: exposed communication wherever it happens
    // (in backward's hooks, in the optimizer's range), with what little runs inside it.
    if (e.name == ranges::kCommWait) return {Category::exposed_comm, Category::exposed_comm};
    // The engine's wrapper of AccumulateGrad carries no sequence number, so the profiler does
    // not mark it as a backward function: its name does.
    if (e.backward_node || e.name.starts_with(kEngineWrapper)) {
      // A custom function's node is known by its name; an ATen node by its forward operator.
      std::optional<Rule> rule = rule_for_backward_node(e.name);
      const bool custom = rule && (rule->reach == Reach::self_only || is_custom(e.name));
      if (!custom && e.sequence_nr >= 0) {
        if (auto it = forward_category_.find(e.sequence_nr); it != forward_category_.end())
          rule = Rule{it->second, Reach::context};
      }
      if (!rule) return {Category::other, inherited};
      if (rule->reach == Reach::self_only) return {rule->category, inherited};
      return {rule->category, rule->category};
    }
    const std::optional<Rule> rule = rule_for_name(e.name);
    Classified out;
    if (!rule) {
      out = {inherited.value_or(parents), inherited};
    } else {
      switch (rule->reach) {
        case Reach::self_only: out = {rule->category, inherited}; break;
        case Reach::weak: out = {inherited.value_or(rule->category), inherited}; break;
        case Reach::context:
        case Reach::decisive: out = {rule->category, rule->category}; break;
      }
    }
    // The last forward event with a sequence number is the one whose autograd node took it.
    if (e.sequence_nr >= 0) forward_category_[e.sequence_nr] = out.category;
    return out;
  }

 private:
  static bool is_custom(const std::string& name) { return name.find("CppNode<") != std::string::npos; }
  std::unordered_map<int64_t, Category> forward_category_;
};

// One classified event on a walk: what attribute_events sums and classify_events lists.
struct Visited {
  const ProfiledEvent* event = nullptr;
  int64_t end_ns = 0;   // clipped to its parent's end
  Category category = Category::other;
  int depth = 0;        // 0: a root (an iteration range on the loop thread)
};

// Walks one thread's events (pre-order sorted) through the rules. Only the roots `is_root`
// accepts and what they hold are walked. `open(visited)` sees every walked event as it opens;
// `close(visited, self_ns, waited_ns)` sees it as it closes, with its self time (its duration
// less its direct children's) and, of that, the nanoseconds it waited: the gaps of a range or
// an autograd node while a collective in `in_flight` ran (never more than its self time; 0 for
// an operator, whose self time is work, and for exposed communication itself). Matrix products
// are counted into `pass` (gemm, attention, uncounted).
template <class IsRoot, class OnOpen, class OnClose>
void walk_thread(const std::vector<const ProfiledEvent*>& events, const IntervalUnion& in_flight, Walk& walk,
                 ProfiledPass& pass, IsRoot is_root, OnOpen open_event, OnClose close_event) {
  std::vector<Open> stack;
  std::vector<Visited> visited;
  // A gap of an open event, [o.gap_start_ns, until): the part with a collective in flight.
  auto end_gap = [&](Open& o, int64_t until) {
    o.gap_in_flight_ns += in_flight.covered(o.gap_start_ns, until);
    o.gap_start_ns = std::max(o.gap_start_ns, until);
  };
  auto close = [&] {
    Open& o = stack.back();
    end_gap(o, o.end_ns);
    const int64_t self_ns = std::max<int64_t>(0, o.duration_ns - o.children_ns);
    // Overlapping children (clock ticks) can make the gaps exceed the self time: never move more.
    const int64_t waited_ns =
        !o.holds_gaps || o.category == Category::exposed_comm ? 0 : std::min(self_ns, o.gap_in_flight_ns);
    close_event(visited.back(), self_ns, waited_ns);
    const int64_t closed_end = o.end_ns;
    stack.pop_back();
    visited.pop_back();
    if (!stack.empty()) stack.back().gap_start_ns = std::max(stack.back().gap_start_ns, closed_end);
  };
  for (const ProfiledEvent* ep : events) {
    const ProfiledEvent& e = *ep;
    while (!stack.empty() && stack.back().end_ns <= e.start_ns) close();
    if (stack.empty() && !is_root(e)) continue;  // outside the profiled iterations
    Open* parent = stack.empty() ? nullptr : &stack.back();
    // A child ends inside its parent; the profiler's clock reads can disagree by a tick.
    const int64_t end = parent ? std::min(e.end_ns, parent->end_ns) : e.end_ns;
    const Classified c = walk.classify(e, parent);
    Open o{end, c.category, c.child_context, parent && parent->inside_counted_matmul, 0, end - e.start_ns, &e.name,
           e.named_range || e.backward_node || e.name.starts_with(kEngineWrapper), e.start_ns, 0};
    if (parent) {
      parent->children_ns += o.duration_ns;
      end_gap(*parent, e.start_ns);
    }
    if (!o.inside_counted_matmul && counts_matmul_flops(e.name)) {
      o.inside_counted_matmul = true;
      if (const auto flops = matmul_flops(e.name, e.input_shapes)) {
        (flops->category == Category::attention ? pass.attention_flops : pass.gemm_flops) += flops->flops;
      } else {
        ++pass.uncounted_matmuls;
      }
    }
    visited.push_back({&e, end, c.category, static_cast<int>(stack.size())});
    stack.push_back(o);
    open_event(visited.back());
  }
  while (!stack.empty()) close();
}

// Pre-order: a parent starts no later than its children and, starting together, ends later.
void sort_pre_order(std::vector<const ProfiledEvent*>& events) {
  std::stable_sort(events.begin(), events.end(), [](const ProfiledEvent* a, const ProfiledEvent* b) {
    return a->start_ns != b->start_ns ? a->start_ns < b->start_ns : a->end_ns > b->end_ns;
  });
}

// The loop's thread: the one that records the iteration ranges; nullopt without one.
std::optional<uint64_t> loop_thread_of(const std::vector<ProfiledEvent>& events) {
  const auto it = std::find_if(events.begin(), events.end(),
                               [](const ProfiledEvent& e) { return e.name == ranges::kIteration; });
  if (it == events.end()) return std::nullopt;
  return it->thread;
}

// A thread's events in pre-order; asynchronous ones (collectives in flight) are no part of its nesting.
std::vector<const ProfiledEvent*> events_of_thread(const std::vector<ProfiledEvent>& events, uint64_t thread) {
  std::vector<const ProfiledEvent*> out;
  for (const ProfiledEvent& e : events)
    if (e.thread == thread && !e.asynchronous && e.end_ns >= e.start_ns) out.push_back(&e);
  sort_pre_order(out);
  return out;
}

bool is_iteration(const ProfiledEvent& e) { return e.name == ranges::kIteration; }

// The collectives in flight, on whatever thread their backend recorded them.
IntervalUnion collectives_in_flight(const std::vector<ProfiledEvent>& events) {
  IntervalUnion in_flight;
  for (const ProfiledEvent& e : events)
    if (e.asynchronous && is_collective_in_flight(e.name)) in_flight.add(e.start_ns, e.end_ns);
  return in_flight;
}

}  // namespace

ProfiledPass attribute_events(std::vector<ProfiledEvent> events) {
  ProfiledPass pass;
  const std::optional<uint64_t> loop_thread = loop_thread_of(events);
  if (!loop_thread) return pass;
  const IntervalUnion in_flight = collectives_in_flight(events);
  Walk walk;
  std::map<std::string, double> other_seconds;
  walk_thread(
      events_of_thread(events, *loop_thread), in_flight, walk, pass, is_iteration,
      [&](const Visited& v) {
        ++pass.events;
        if (v.depth == 0) {
          ++pass.iterations;
          pass.range_seconds += static_cast<double>(v.end_ns - v.event->start_ns) * 1e-9;
          pass.comm_in_flight_seconds += static_cast<double>(in_flight.covered(v.event->start_ns, v.end_ns)) * 1e-9;
        }
      },
      [&](const Visited& v, int64_t self_ns, int64_t waited_ns) {
        const double self = static_cast<double>(self_ns - waited_ns) * 1e-9;
        const double waited = static_cast<double>(waited_ns) * 1e-9;
        pass.seconds[index_of(v.category)] += self;
        pass.seconds[index_of(Category::exposed_comm)] += waited;
        pass.exposed_comm_gap_seconds += waited;
        if (v.category == Category::other) other_seconds[v.event->name] += self;
      });
  pass.other_by_name.assign(other_seconds.begin(), other_seconds.end());
  std::sort(pass.other_by_name.begin(), pass.other_by_name.end(),
            [](const auto& a, const auto& b) { return a.second > b.second; });
  return pass;
}

ClassifiedEvents classify_events(const std::vector<ProfiledEvent>& events) {
  ClassifiedEvents out;
  const std::optional<uint64_t> loop_thread = loop_thread_of(events);
  if (!loop_thread) return out;
  // The loop's thread first: its forward operators give the backward nodes, which on a CUDA
  // device the autograd engine runs on its own thread, their categories.
  Walk walk;
  ProfiledPass counts;
  std::vector<std::pair<int64_t, int64_t>> iterations;
  auto keep = [&](const Visited& v) {
    out.events.push_back({v.event->name, v.event->start_ns, v.end_ns, v.event->thread, v.depth, v.category});
  };
  // No collective is in flight for this walk: on a CUDA device NCCL's time is the device's
  // (device_timeline.hpp), and nothing here is summed.
  const IntervalUnion none;
  walk_thread(events_of_thread(events, *loop_thread), none, walk, counts, is_iteration,
              [&](const Visited& v) {
                keep(v);
                if (v.depth == 0) iterations.emplace_back(v.event->start_ns, v.end_ns);
              },
              [](const Visited&, int64_t, int64_t) {});
  // Every other thread: its top-level events that start inside an iteration range are roots.
  auto inside_an_iteration = [&](const ProfiledEvent& e) {
    return std::any_of(iterations.begin(), iterations.end(),
                       [&](const auto& r) { return r.first <= e.start_ns && e.start_ns < r.second; });
  };
  std::set<uint64_t> threads;
  for (const ProfiledEvent& e : events)
    if (e.thread != *loop_thread) threads.insert(e.thread);
  for (const uint64_t thread : threads)
    walk_thread(events_of_thread(events, thread), none, walk, counts, inside_an_iteration, keep,
                [](const Visited&, int64_t, int64_t) {});
  out.gemm_flops = counts.gemm_flops;
  out.attention_flops = counts.attention_flops;
  out.uncounted_matmuls = counts.uncounted_matmuls;
  return out;
}

}  // namespace tokbench::account
