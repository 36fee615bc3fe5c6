// A profiled pass's host events turned into the time account's raw figures: the seconds of each
// category and the matrix-product FLOPs, summed over the pass's iterations. Every event's SELF
// time (its duration less its direct children's) goes to one category, so nothing is counted
// twice and, within an iteration range (range_names.hpp: kIteration), the categories add up to
// the range's duration exactly. The rule per event (docs/time-account.md):
//   1. a backward node (an autograd node, or the engine's wrapper of one) takes the category of
//      tokbench's custom function it belongs to, else of the forward operator that made it
//      (matched by sequence number: the last forward event recorded with that number), else
//      the one its name spells (rule_for_backward_node);
//   2. a distributed step's wait for a collective (range_names.hpp: kCommWait) is exposed
//      communication, and the context of what runs inside it;
//   3. any other event takes its own rule (op_rules.hpp); a weak rule yields to an enclosing
//      context, and an event no rule names takes its parent's category. A collective issued
//      through the dispatcher ("c10d::allreduce_") keeps its own time as exposed communication:
//      a synchronous one blocks inside it.
// Then the waits no range marks: where a communication backend records its collectives on its
// own threads as asynchronous events (Gloo under torch.profiler, is_collective_in_flight), a
// gap of the loop's thread (a named range's or an autograd node's self time outside its
// children; an operator's own time is work) that falls while a
// collective is in flight is a wait for it, and that part of the gap moves from the event's
// category to exposed communication. A gap with nothing in flight stays where it was, and so
// does an operator that runs while a collective is in flight (that communication is hidden).
// Torch-free: the train layer converts the profiler's events into ProfiledEvent.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "account/category.hpp"
#include "account/matmul_flops.hpp"

namespace tokbench::account {

// One operator, named range or autograd node the profiler recorded on the host.
struct ProfiledEvent {
  std::string name;
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  uint64_t thread = 0;
  int64_t sequence_nr = -1;    // the autograd sequence number; -1 when none
  // An autograd node's evaluation (the profiler's BACKWARD_FUNCTION scope); events named
  // "autograd::engine::evaluate_function: ..." are read as nodes whatever this says.
  bool backward_node = false;
  Shapes input_shapes;         // recorded input shapes ({} per non-tensor input)
  // A named range (record_function: the profiler's USER_SCOPE) rather than an operator. With an
  // autograd node, the events whose self time is a gap of the loop's thread, not work it does.
  bool named_range = false;
  // Recorded as an asynchronous event (on a backend's thread, from start to completion): read
  // only as a collective in flight (is_collective_in_flight), never attributed.
  bool asynchronous = false;
};

struct ProfiledPass {
  int64_t iterations = 0;                      // iteration ranges found
  std::array<double, kCategoryCount> seconds{};  // per category, summed over the iterations
  double range_seconds = 0;                    // the iteration ranges' durations, summed (= Σ seconds)
  int64_t gemm_flops = 0;                      // GEMM operators' FLOPs, summed over the iterations
  int64_t attention_flops = 0;                 // SDPA kernels' FLOPs, likewise
  int64_t uncounted_matmuls = 0;               // counted operators whose shapes were missing
  int64_t events = 0;                          // events inside the iteration ranges
  // Collectives in flight (the union of their asynchronous events) within the iteration ranges,
  // and the part of the loop's gaps they made exposed communication, both summed; 0 when no
  // asynchronous collective was recorded (tokbench's own steps, which time their waits).
  double comm_in_flight_seconds = 0;
  double exposed_comm_gap_seconds = 0;
  // What "other" holds: self seconds by event name, summed over the iterations, largest first.
  std::vector<std::pair<std::string, double>> other_by_name;
};

// The events of every thread, in any order; only the iteration ranges' thread (the one that
// runs the loop and, on the CPU, the autograd engine) is attributed, and only inside those
// ranges. Asynchronous collectives (any thread) only say when a collective is in flight.
ProfiledPass attribute_events(std::vector<ProfiledEvent> events);

// One host event as the rules classified it: what the device timeline asks "which category
// was the host in at this instant" of (device_timeline.hpp).
struct ClassifiedEvent {
  std::string name;
  int64_t start_ns = 0;
  int64_t end_ns = 0;  // clipped to its parent's end
  uint64_t thread = 0;
  int depth = 0;       // 0: a root (an iteration range on the loop's thread)
  Category category = Category::other;
};

struct ClassifiedEvents {
  std::vector<ClassifiedEvent> events;  // per thread in pre-order, the loop's thread first
  int64_t gemm_flops = 0;               // the matrix products of every thread, as attribute_events counts them
  int64_t attention_flops = 0;
  int64_t uncounted_matmuls = 0;
};

// The same rules and walk as attribute_events, over every thread: the loop's thread inside its
// iteration ranges, and any other thread's events that start inside one (on a CUDA device the
// autograd engine runs backward on a thread of its own; its nodes take their forward
// operators' categories as on the loop's thread). Nothing is summed: each event keeps its
// category and its place in its thread's nesting.
ClassifiedEvents classify_events(const std::vector<ProfiledEvent>& events);

}  // namespace tokbench::account
