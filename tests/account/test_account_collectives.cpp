// Exposed communication read from the profiler's events alone (account/profiled_pass.hpp), as
// the Python executors' steps need it: they have no timer around their waits. Hand-built events
// where every microsecond has a known home: a synchronous collective's operator, the loop's gaps
// while a collective runs on a backend thread, a gap with nothing in flight, an operator that
// runs while a collective is in flight (hidden communication), and the sum kept.
#include <gtest/gtest.h>

#include <numeric>

#include "account/intervals.hpp"
#include "account/op_rules.hpp"
#include "account/profiled_pass.hpp"
#include "account/range_names.hpp"
#include "account/time_account.hpp"
#include "account/time_account_json.hpp"

namespace tokbench::account {
namespace {

constexpr uint64_t kLoop = 7;
constexpr uint64_t kGlooThread = 42;

struct Events {
  std::vector<ProfiledEvent> list;
  static ProfiledEvent event(std::string name, int64_t start_us, int64_t end_us, uint64_t thread) {
    ProfiledEvent e;
    e.name = std::move(name);
    e.start_ns = start_us * 1000;
    e.end_ns = end_us * 1000;
    e.thread = thread;
    return e;
  }
  // An operator on the loop's thread.
  void op(std::string name, int64_t start_us, int64_t end_us) { list.push_back(event(std::move(name), start_us, end_us, kLoop)); }
  // A record_function range on the loop's thread.
  void range(std::string name, int64_t start_us, int64_t end_us) {
    op(std::move(name), start_us, end_us);
    list.back().named_range = true;
  }
  // An autograd node.
  void node(std::string name, int64_t start_us, int64_t end_us) {
    op(std::move(name), start_us, end_us);
    list.back().backward_node = true;
  }
  // A collective on Gloo's thread, from its start to its completion.
  void in_flight(std::string name, int64_t start_us, int64_t end_us) {
    list.push_back(event(std::move(name), start_us, end_us, kGlooThread));
    list.back().asynchronous = true;
  }
};

double us(const ProfiledPass& p, Category c) { return p.seconds[index_of(c)] * 1e6; }
double sum(const ProfiledPass& p) { return std::accumulate(p.seconds.begin(), p.seconds.end(), 0.0); }

TEST(Intervals, UnionCoversEachInstantOnce) {
  IntervalUnion u;
  EXPECT_EQ(u.covered(0, 100), 0);
  u.add(10, 20);
  u.add(15, 30);   // overlaps the first
  u.add(30, 40);   // touches it
  u.add(60, 70);
  u.add(80, 75);   // reversed: ignored
  EXPECT_EQ(u.covered(0, 100), 40);
  EXPECT_EQ(u.covered(25, 65), 20);
  EXPECT_EQ(u.covered(40, 60), 0);
  EXPECT_EQ(u.covered(65, 65), 0);
  u.add(0, 5);  // added after a query: merged again
  EXPECT_EQ(u.covered(0, 100), 45);
}

TEST(Collectives, NamesOfIssueAndFlight) {
  EXPECT_EQ(rule_for_name("c10d::allreduce_")->category, Category::exposed_comm);
  EXPECT_EQ(rule_for_name("c10d::_allgather_base_")->reach, Reach::self_only);
  EXPECT_EQ(rule_for_name("record_param_comms")->category, Category::exposed_comm);
  EXPECT_TRUE(is_collective_in_flight("gloo:all_reduce"));
  EXPECT_TRUE(is_collective_in_flight("gloo:all_gather"));
  EXPECT_FALSE(is_collective_in_flight("aten::copy_"));
  EXPECT_FALSE(is_collective_in_flight("c10d::allreduce_"));  // the issue, not the flight
}

// A synchronous collective (FSDP's gather on Gloo) blocks inside its operator: its own time is
// exposed communication; what runs inside it keeps its own rule.
TEST(Collectives, ASynchronousCollectiveBlocksInItsOperator) {
  Events e;
  e.range(ranges::kIteration, 0, 1000);
  e.range(ranges::kForward, 0, 1000);
  e.op("c10d::_allgather_base_", 100, 400);
  e.op("aten::chunk", 110, 120);       //   10 µs of elementwise inside it
  e.in_flight("gloo:all_gather", 130, 390);
  e.op("aten::addmm", 400, 1000);
  const ProfiledPass p = attribute_events(e.list);
  EXPECT_NEAR(us(p, Category::exposed_comm), 290, 1e-6);
  EXPECT_NEAR(us(p, Category::elementwise), 10, 1e-6);
  EXPECT_NEAR(us(p, Category::gemm), 600, 1e-6);
  EXPECT_NEAR(us(p, Category::other), 100, 1e-6);  // forward's gap before the gather: nothing in flight
  EXPECT_NEAR(p.exposed_comm_gap_seconds, 0, 1e-12);
  EXPECT_NEAR(p.comm_in_flight_seconds * 1e6, 260, 1e-6);
  EXPECT_NEAR(sum(p), p.range_seconds, 1e-12);
}

// DDP: the bucket's all-reduce is issued from a backward hook and runs on Gloo's thread while
// the loop computes the earlier layers' gradients (hidden: no time of the rank's), then the
// loop waits for it in backward's gap (the reducer's finalize), then the optimizer runs.
TEST(Collectives, GapsWhileACollectiveIsInFlightAreExposed) {
  Events e;
  e.range(ranges::kIteration, 0, 2000);
  e.range(ranges::kData, 0, 100);                       // 100 µs of batch, its gap data_host
  e.range(ranges::kBackward, 100, 1500);
  e.node("AddmmBackward0", 100, 400);
  e.op("c10d::allreduce_", 380, 400);                   //   the issue: 20 µs
  e.in_flight("gloo:all_reduce", 400, 1300);
  e.node("MmBackward0", 400, 800);                       //   computes while it flies: 300 µs of its
  e.op("aten::mm", 420, 720);                            //     own mm, 100 µs of node glue in flight
  //                                                       backward's gap 800..1500: 500 µs in flight
  e.range(ranges::kOptimizer, 1500, 2000);
  e.op("aten::_fused_adamw_", 1500, 1900);               //   optimizer's gap 1900..2000: nothing flies
  const ProfiledPass p = attribute_events(e.list);
  EXPECT_NEAR(us(p, Category::exposed_comm), 20 + 100 + 500, 1e-6);
  EXPECT_NEAR(p.exposed_comm_gap_seconds * 1e6, 100 + 500, 1e-6);
  EXPECT_NEAR(us(p, Category::gemm), 280 + 300, 1e-6);  // AddmmBackward0's own time before the issue, the mm
  EXPECT_NEAR(us(p, Category::optimizer), 500, 1e-6);    // the gap with nothing in flight stays
  EXPECT_NEAR(us(p, Category::data_host), 100, 1e-6);
  EXPECT_NEAR(us(p, Category::other), 200, 1e-6);         // backward's gap after the all-reduce ended
  EXPECT_NEAR(p.comm_in_flight_seconds * 1e6, 900, 1e-6);
  EXPECT_NEAR(sum(p), p.range_seconds, 1e-12);
}

// An operator's own time is work even while a collective flies (a composite's dispatch); only a
// range's or a node's gaps can be waits. Asynchronous events are never attributed, and those
// that are no collective say nothing.
TEST(Collectives, OperatorsAndOtherAsynchronousEventsStayWhereTheyWere) {
  Events e;
  e.range(ranges::kIteration, 0, 1000);
  e.op("aten::linear", 0, 1000);
  e.op("aten::addmm", 100, 900);
  e.in_flight("gloo:all_reduce", 0, 1000);
  e.in_flight("some_async_marker", 0, 1000);
  e.list.back().thread = kLoop;
  const ProfiledPass p = attribute_events(e.list);
  EXPECT_NEAR(us(p, Category::gemm), 1000, 1e-6);
  EXPECT_NEAR(us(p, Category::exposed_comm), 0, 1e-6);
  EXPECT_EQ(p.events, 3);  // the iteration, the linear, the addmm
  EXPECT_NEAR(sum(p), p.range_seconds, 1e-12);
}

// Without asynchronous events (tokbench's own steps) nothing moves: the waits are their ranges.
TEST(Collectives, WithoutBackendEventsNothingMoves) {
  Events e;
  e.range(ranges::kIteration, 0, 1000);
  e.range(ranges::kBackward, 0, 1000);
  e.op(ranges::kCommWait, 200, 700);
  const ProfiledPass p = attribute_events(e.list);
  EXPECT_NEAR(us(p, Category::exposed_comm), 500, 1e-6);
  EXPECT_NEAR(us(p, Category::other), 500, 1e-6);
  EXPECT_EQ(p.exposed_comm_gap_seconds, 0);
  EXPECT_EQ(p.comm_in_flight_seconds, 0);
}

ProfiledPass two_iterations_with_waits() {
  ProfiledPass p;
  p.iterations = 2;
  p.range_seconds = 0.2;
  p.seconds[index_of(Category::gemm)] = 0.12;
  p.seconds[index_of(Category::exposed_comm)] = 0.05;
  p.seconds[index_of(Category::other)] = 0.03;
  p.exposed_comm_gap_seconds = 0.04;
  p.comm_in_flight_seconds = 0.09;
  return p;
}

// From the profiler, the account keeps the attribution's exposed communication as it is, says
// so, and records the gaps it moved and the collectives in flight, per iteration.
TEST(Collectives, TheAccountKeepsTheProfilersExposedCommunication) {
  AccountInputs in;
  in.source = "torch_profiler_cpu";
  in.measured_iteration_seconds = 0.1;
  in.profiled_clock_seconds = 0.2;
  in.exposed_comm_source = kExposedCommFromProfiler;
  in.exposed_comm_seconds = 1.0;  // not read from the profiler
  in.rank = 1;
  const TimeAccount a = make_time_account(two_iterations_with_waits(), in);
  EXPECT_DOUBLE_EQ(a[Category::exposed_comm].profiled_seconds, 0.025);
  EXPECT_DOUBLE_EQ(a[Category::other].profiled_seconds, 0.015);
  EXPECT_FALSE(a.exposed_comm_step_seconds.has_value());
  EXPECT_DOUBLE_EQ(a.exposed_comm_seen_seconds, 0.025);
  EXPECT_DOUBLE_EQ(*a.exposed_comm_gap_seconds, 0.02);
  EXPECT_DOUBLE_EQ(*a.comm_in_flight_seconds, 0.045);
  const TimeAccount back = time_account_from_json(to_json(a));
  EXPECT_EQ(back.exposed_comm_source, kExposedCommFromProfiler);
  EXPECT_FALSE(back.exposed_comm_step_seconds.has_value());
  EXPECT_DOUBLE_EQ(*back.exposed_comm_gap_seconds, 0.02);
  EXPECT_DOUBLE_EQ(*back.comm_in_flight_seconds, 0.045);
  // From the step, as before: no backend's view.
  in.exposed_comm_source = kExposedCommFromStep;
  in.exposed_comm_seconds = 0.04;
  const TimeAccount step = make_time_account(two_iterations_with_waits(), in);
  EXPECT_DOUBLE_EQ(*step.exposed_comm_step_seconds, 0.02);
  EXPECT_FALSE(step.comm_in_flight_seconds.has_value());
  EXPECT_EQ(to_json(step).at("exposed_comm_source"), "step");
  in.exposed_comm_source = "guess";
  EXPECT_THROW(make_time_account(two_iterations_with_waits(), in), std::invalid_argument);
}

}  // namespace
}  // namespace tokbench::account
