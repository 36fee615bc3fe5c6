// Self-time attribution of a profiled pass's events (profiled_pass.hpp).
#include "account/profiled_pass.hpp"

#include <algorithm>
#include <map>
#include <optional>
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

}  // namespace

ProfiledPass attribute_events(std::vector<ProfiledEvent> events) {
  ProfiledPass pass;
  const auto first_iteration = std::find_if(events.begin(), events.end(),
                                            [](const ProfiledEvent& e) { return e.name == ranges::kIteration; });
  if (first_iteration == events.end()) return pass;
  const uint64_t loop_thread = first_iteration->thread;
  // The collectives in flight, on whatever thread their backend recorded them.
  IntervalUnion in_flight;
  for (const ProfiledEvent& e : events)
    if (e.asynchronous && is_collective_in_flight(e.name)) in_flight.add(e.start_ns, e.end_ns);
  std::erase_if(events, [&](const ProfiledEvent& e) {
    return e.asynchronous || e.thread != loop_thread || e.end_ns < e.start_ns;
  });
  // Pre-order: a parent starts no later than its children and, starting together, ends later.
  std::stable_sort(events.begin(), events.end(), [](const ProfiledEvent& a, const ProfiledEvent& b) {
    return a.start_ns != b.start_ns ? a.start_ns < b.start_ns : a.end_ns > b.end_ns;
  });

  Walk walk;
  std::vector<Open> stack;
  std::map<std::string, double> other_seconds;
  // A gap of an open event, [o.gap_start_ns, until): the part with a collective in flight.
  auto end_gap = [&](Open& o, int64_t until) {
    o.gap_in_flight_ns += in_flight.covered(o.gap_start_ns, until);
    o.gap_start_ns = std::max(o.gap_start_ns, until);
  };
  auto close = [&](Open& o) {
    end_gap(o, o.end_ns);
    const int64_t self_ns = std::max<int64_t>(0, o.duration_ns - o.children_ns);
    // Overlapping children (clock ticks) can make the gaps exceed the self time: never move more.
    const int64_t waited_ns =
        !o.holds_gaps || o.category == Category::exposed_comm ? 0 : std::min(self_ns, o.gap_in_flight_ns);
    const double self = static_cast<double>(self_ns - waited_ns) * 1e-9;
    const double waited = static_cast<double>(waited_ns) * 1e-9;
    pass.seconds[index_of(o.category)] += self;
    pass.seconds[index_of(Category::exposed_comm)] += waited;
    pass.exposed_comm_gap_seconds += waited;
    if (o.category == Category::other) other_seconds[*o.name] += self;
  };
  auto pop = [&]() {
    Open closed = stack.back();
    stack.pop_back();
    close(closed);
    if (!stack.empty()) stack.back().gap_start_ns = std::max(stack.back().gap_start_ns, closed.end_ns);
  };
  for (const ProfiledEvent& e : events) {
    while (!stack.empty() && stack.back().end_ns <= e.start_ns) pop();
    if (stack.empty()) {
      if (e.name != ranges::kIteration) continue;  // outside the profiled iterations
      ++pass.iterations;
      pass.range_seconds += static_cast<double>(e.end_ns - e.start_ns) * 1e-9;
      pass.comm_in_flight_seconds += static_cast<double>(in_flight.covered(e.start_ns, e.end_ns)) * 1e-9;
    }
    Open* parent = stack.empty() ? nullptr : &stack.back();
    // A child ends inside its parent; the profiler's clock reads can disagree by a tick.
    const int64_t end = parent ? std::min(e.end_ns, parent->end_ns) : e.end_ns;
    const Classified c = walk.classify(e, parent);
    Open open{end, c.category, c.child_context, parent && parent->inside_counted_matmul, 0, end - e.start_ns, &e.name,
              e.named_range || e.backward_node || e.name.starts_with(kEngineWrapper), e.start_ns, 0};
    if (parent) {
      parent->children_ns += open.duration_ns;
      end_gap(*parent, e.start_ns);
    }
    ++pass.events;
    if (!open.inside_counted_matmul && counts_matmul_flops(e.name)) {
      open.inside_counted_matmul = true;
      if (const auto flops = matmul_flops(e.name, e.input_shapes)) {
        (flops->category == Category::attention ? pass.attention_flops : pass.gemm_flops) += flops->flops;
      } else {
        ++pass.uncounted_matmuls;
      }
    }
    stack.push_back(open);
  }
  while (!stack.empty()) pop();
  pass.other_by_name.assign(other_seconds.begin(), other_seconds.end());
  std::sort(pass.other_by_name.begin(), pass.other_by_name.end(),
            [](const auto& a, const auto& b) { return a.second > b.second; });
  return pass;
}

}  // namespace tokbench::account
