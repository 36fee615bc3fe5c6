// process::SignalScope with real signals (raise, children started by process::Child): what a
// scope counts and where it wakes, that the dispositions before it come back, that nested scopes
// each see a signal, and the forwarding to a child (SIGINT first, SIGKILL after).
#include <gtest/gtest.h>

#include <poll.h>
#include <signal.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "process/child_process.hpp"
#include "process/signal_scope.hpp"

namespace tokbench::process {
namespace {

using namespace std::chrono_literals;

std::atomic<int> g_outside_handler_calls{0};
extern "C" void outside_handler(int) { g_outside_handler_calls.fetch_add(1); }

void (*current_handler(int signal_number))(int) {
  struct sigaction now {};
  ::sigaction(signal_number, nullptr, &now);
  return now.sa_handler;
}

bool readable(int fd) {
  pollfd p{fd, POLLIN, 0};
  return ::poll(&p, 1, 0) == 1 && (p.revents & POLLIN) != 0;
}

// Restores SIGINT and SIGTERM as they were when the test started, whatever it did.
class SignalScopeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ::sigaction(SIGINT, nullptr, &saved_int_);
    ::sigaction(SIGTERM, nullptr, &saved_term_);
    g_outside_handler_calls.store(0);
  }
  void TearDown() override {
    ::sigaction(SIGINT, &saved_int_, nullptr);
    ::sigaction(SIGTERM, &saved_term_, nullptr);
  }
  void install_outside_handler() {
    struct sigaction action {};
    action.sa_handler = outside_handler;
    sigemptyset(&action.sa_mask);
    ::sigaction(SIGINT, &action, nullptr);
    ::sigaction(SIGTERM, &action, nullptr);
  }

 private:
  struct sigaction saved_int_ {}, saved_term_ {};
};

TEST_F(SignalScopeTest, AStopRequestIsCountedAndWakesTheSelfPipe) {
  SignalScope scope(SignalScopeOptions{.self_pipe = true});
  ASSERT_GE(scope.wake_fd(), 0);
  EXPECT_FALSE(readable(scope.wake_fd()));
  EXPECT_FALSE(scope.stop_requested().load());

  ASSERT_EQ(::raise(SIGINT), 0);
  EXPECT_EQ(scope.stop_count(), 1);
  EXPECT_EQ(scope.first_stop_signal(), SIGINT);
  EXPECT_TRUE(scope.stop_requested().load());
  EXPECT_TRUE(readable(scope.wake_fd()));

  ASSERT_EQ(::raise(SIGTERM), 0);
  EXPECT_EQ(scope.stop_count(), 2);
  EXPECT_EQ(scope.first_stop_signal(), SIGINT);  // the first stays the first
  EXPECT_EQ(scope.take_signals(), (std::vector<int>{SIGINT, SIGTERM}));
  EXPECT_FALSE(readable(scope.wake_fd()));  // drained
}

TEST_F(SignalScopeTest, WithoutASelfPipeAStopIsOnlyCounted) {
  SignalScope scope;
  EXPECT_EQ(scope.wake_fd(), -1);
  ASSERT_EQ(::raise(SIGTERM), 0);
  EXPECT_EQ(scope.stop_count(), 1);
  EXPECT_EQ(scope.first_stop_signal(), SIGTERM);
  EXPECT_TRUE(scope.take_signals().empty());
}

TEST_F(SignalScopeTest, AWakeSignalWakesThePipeButIsNoStopRequest) {
  struct sigaction saved_chld {};
  ::sigaction(SIGCHLD, nullptr, &saved_chld);
  {
    SignalScope scope(SignalScopeOptions{.self_pipe = true, .wake_signals = {SIGCHLD}});
    ASSERT_EQ(::raise(SIGCHLD), 0);
    EXPECT_EQ(scope.stop_count(), 0);
    EXPECT_FALSE(scope.stop_requested().load());
    EXPECT_EQ(scope.take_signals(), (std::vector<int>{SIGCHLD}));
  }
  EXPECT_EQ(current_handler(SIGCHLD), saved_chld.sa_handler);
}

TEST_F(SignalScopeTest, TheHandlersFromBeforeTheScopeAreBackWhenItCloses) {
  install_outside_handler();
  {
    SignalScope scope;
    EXPECT_NE(current_handler(SIGINT), &outside_handler);
    ASSERT_EQ(::raise(SIGINT), 0);
    EXPECT_EQ(scope.stop_count(), 1);
    EXPECT_EQ(g_outside_handler_calls.load(), 0);  // the scope caught it, not the handler before
  }
  EXPECT_EQ(current_handler(SIGINT), &outside_handler);
  EXPECT_EQ(current_handler(SIGTERM), &outside_handler);
  ASSERT_EQ(::raise(SIGTERM), 0);
  EXPECT_EQ(g_outside_handler_calls.load(), 1);

  // The default disposition comes back too.
  ::signal(SIGINT, SIG_DFL);
  { SignalScope scope; }
  EXPECT_EQ(current_handler(SIGINT), SIG_DFL);
}

TEST_F(SignalScopeTest, NestedScopesEachSeeASignalAndCloseInTurn) {
  install_outside_handler();
  SignalScope outer(SignalScopeOptions{.self_pipe = true});
  {
    SignalScope inner(SignalScopeOptions{.self_pipe = true});
    ASSERT_EQ(::raise(SIGINT), 0);
    EXPECT_EQ(inner.stop_count(), 1);
    EXPECT_EQ(outer.stop_count(), 1);  // a sweep around a run would stop too
    EXPECT_EQ(inner.take_signals(), (std::vector<int>{SIGINT}));
    EXPECT_EQ(outer.take_signals(), (std::vector<int>{SIGINT}));
  }
  // The inner scope is gone; the outer one still catches.
  ASSERT_EQ(::raise(SIGTERM), 0);
  EXPECT_EQ(outer.stop_count(), 2);
  EXPECT_EQ(outer.take_signals(), (std::vector<int>{SIGTERM}));
  EXPECT_EQ(g_outside_handler_calls.load(), 0);
}

std::atomic<int> g_action_calls{0};
std::atomic<int> g_last_action_count{0};
void record_action(int count) {
  g_action_calls.fetch_add(1);
  g_last_action_count.store(count);
}

TEST_F(SignalScopeTest, TheActionRunsOnEveryStopWithTheCountSoFar) {
  g_action_calls.store(0);
  SignalScope scope(SignalScopeOptions{.on_stop = record_action});
  ASSERT_EQ(::raise(SIGINT), 0);
  EXPECT_EQ(g_action_calls.load(), 1);
  EXPECT_EQ(g_last_action_count.load(), 1);
  ASSERT_EQ(::raise(SIGINT), 0);
  EXPECT_EQ(g_action_calls.load(), 2);
  EXPECT_EQ(g_last_action_count.load(), 2);
}

SpawnSpec shell(const std::string& script) {
  SpawnSpec spec;
  spec.argv = {"/bin/sh", "-c", script};
  return spec;
}

TEST_F(SignalScopeTest, TheFirstStopIsForwardedToTheChildAsSigint) {
  SignalScope scope;
  Child child(shell("exec sleep 30"));  // its own process group: our raise() does not reach it
  scope.forward_to(child.pid());
  ASSERT_EQ(::raise(SIGTERM), 0);
  const auto status = child.wait_until(Clock::now() + 10s);
  ASSERT_TRUE(status.has_value()) << "the child was not signalled";
  EXPECT_EQ(status->signal, SIGINT);
}

TEST_F(SignalScopeTest, TheSecondStopKillsAChildThatIgnoredTheFirst) {
  SignalScope scope;
  Child child(shell("trap '' INT; while :; do sleep 0.05; done"));
  // The trap must be set before the first SIGINT arrives, or the shell dies of it.
  std::this_thread::sleep_for(300ms);
  scope.forward_to(child.pid());
  ASSERT_EQ(::raise(SIGINT), 0);
  EXPECT_FALSE(child.wait_until(Clock::now() + 300ms).has_value());  // ignored
  ASSERT_EQ(::raise(SIGINT), 0);
  const auto status = child.wait_until(Clock::now() + 10s);
  ASSERT_TRUE(status.has_value());
  EXPECT_EQ(status->signal, SIGKILL);
}

TEST_F(SignalScopeTest, AStopBeforeTheChildWasKnownIsForwardedWhenItIs) {
  SignalScope scope;
  ASSERT_EQ(::raise(SIGINT), 0);
  Child child(shell("exec sleep 30"));
  scope.forward_to(child.pid());
  const auto status = child.wait_until(Clock::now() + 10s);
  ASSERT_TRUE(status.has_value());
  EXPECT_EQ(status->signal, SIGINT);
}

TEST_F(SignalScopeTest, NothingIsForwardedAfterForwardingStops) {
  SignalScope scope;
  Child child(shell("exec sleep 30"));
  scope.forward_to(child.pid());
  scope.forward_to(0);
  ASSERT_EQ(::raise(SIGINT), 0);
  EXPECT_FALSE(child.wait_until(Clock::now() + 300ms).has_value());
  child.signal_group(SIGKILL);
  (void)child.wait();
}

}  // namespace
}  // namespace tokbench::process
