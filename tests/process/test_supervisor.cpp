// process::supervise against real children (/bin/sh scripts): a group that all exit 0, one that
// fails and has the rest ended within the grace, and a stop request forwarded to every child.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "process/child_process.hpp"
#include "process/supervisor.hpp"

namespace tokbench::process {
namespace {

using namespace std::chrono_literals;

bool no_children_left() { return ::waitpid(-1, nullptr, WNOHANG) == -1 && errno == ECHILD; }

// Where the children's lines and the supervisor's messages go, read back as text.
class MemorySink {
 public:
  MemorySink() : file_(::open_memstream(&buffer_, &size_)) {}
  ~MemorySink() {
    std::fclose(file_);
    std::free(buffer_);
  }
  std::FILE* file() const { return file_; }
  std::string text() {
    std::fflush(file_);
    return std::string(buffer_, size_);
  }

 private:
  char* buffer_ = nullptr;
  std::size_t size_ = 0;
  std::FILE* file_;
};

// Starts `script` under /bin/sh as child `id`, its stdout and stderr relayed into `sink` with
// the prefix "[c<id>] ".
void start(std::vector<SupervisedChild>& children, int id, const std::string& script, std::FILE* sink) {
  int out[2];
  ASSERT_EQ(::pipe2(out, O_CLOEXEC), 0);
  ASSERT_EQ(::fcntl(out[0], F_SETFL, O_NONBLOCK), 0);
  SpawnSpec spec;
  spec.argv = {"/bin/sh", "-c", script};
  spec.stdout_fd = out[1];
  spec.stderr_fd = out[1];
  SupervisedChild& child = children.emplace_back();
  child.id = id;
  child.start = Clock::now();
  child.pid = spawn(spec);
  ::close(out[1]);
  child.output[0] = LineRelay(Fd(out[0]), sink, "[c" + std::to_string(id) + "] ");
}

SignalScopeOptions supervisor_signals() { return SignalScopeOptions{.self_pipe = true, .wake_signals = {SIGCHLD}}; }

TEST(Supervisor, ChildrenThatAllExitZeroSucceedWithTheirOutputRelayed) {
  MemorySink out;
  SignalScope signals(supervisor_signals());
  std::vector<SupervisedChild> children;
  for (int id = 0; id < 3; ++id) start(children, id, "echo hello " + std::to_string(id), out.file());
  SupervisorOptions options;
  options.messages = out.file();
  const SupervisionResult result = supervise(children, signals, options);

  EXPECT_FALSE(result.first_failed.has_value());
  EXPECT_EQ(result.failure, "");
  EXPECT_EQ(result.stop_requests, 0);
  for (const SupervisedChild& child : children) {
    EXPECT_TRUE(child.reaped);
    EXPECT_TRUE(child.status.succeeded()) << child.status.describe();
    EXPECT_FALSE(child.ended_by_supervisor);
    EXPECT_FALSE(child.output[0].is_open());
  }
  const std::string text = out.text();
  for (int id = 0; id < 3; ++id) {
    EXPECT_NE(text.find("[c" + std::to_string(id) + "] hello " + std::to_string(id) + "\n"), std::string::npos) << text;
  }
  EXPECT_TRUE(no_children_left());
}

TEST(Supervisor, OneFailureEndsTheOthersAfterTheGrace) {
  MemorySink out;
  SignalScope signals(supervisor_signals());
  std::vector<SupervisedChild> children;
  start(children, 0, "exec sleep 60", out.file());
  start(children, 1, "sleep 0.2; echo failing; exit 3", out.file());
  start(children, 2, "exec sleep 60", out.file());
  SupervisorOptions options;
  options.messages = out.file();
  options.message_prefix = "test: ";
  options.failure_grace_seconds = 0.5;
  const auto before = Clock::now();
  const SupervisionResult result = supervise(children, signals, options);
  const double seconds = std::chrono::duration<double>(Clock::now() - before).count();

  // SIGTERM at the end of the grace ends `sleep` at once; SIGKILL would have come 5 s later.
  EXPECT_LT(seconds, 4.0);
  EXPECT_GE(seconds, 0.6);  // the failure after 0.2 s, then the whole grace
  ASSERT_TRUE(result.first_failed.has_value());
  EXPECT_EQ(*result.first_failed, 1u);
  EXPECT_EQ(result.failure.rfind("child 1 exited with code 3 after ", 0), 0u) << result.failure;
  EXPECT_EQ(children[1].status.exit_code, 3);
  EXPECT_FALSE(children[1].ended_by_supervisor);
  for (const std::size_t i : {0u, 2u}) {
    EXPECT_EQ(children[i].status.signal, SIGTERM) << children[i].status.describe();
    EXPECT_TRUE(children[i].ended_by_supervisor);
  }
  const std::string text = out.text();
  EXPECT_NE(text.find("[c1] failing\n"), std::string::npos) << text;
  EXPECT_NE(text.find("test: child 1 exited with code 3; ending the other children (grace 0.5 s)\n"), std::string::npos)
      << text;
  EXPECT_NE(text.find("test: still running after child 1 failed: child(s) 0, 2; sending SIGTERM\n"), std::string::npos)
      << text;
  EXPECT_TRUE(no_children_left());
}

TEST(Supervisor, AStopRequestIsForwardedToEveryChildAndIsNoFailure) {
  MemorySink out;
  SignalScope signals(supervisor_signals());
  std::vector<SupervisedChild> children;
  // Each child reports the forwarded signal and ends cleanly, as a tokbench rank does.
  for (int id = 0; id < 2; ++id) {
    start(children, id, "trap 'echo got-int; exit 0' INT; echo ready; while :; do sleep 0.05; done", out.file());
  }
  SupervisorOptions options;
  options.messages = out.file();
  std::thread interrupter([&] {
    std::this_thread::sleep_for(500ms);  // the traps are set by then
    ::kill(::getpid(), SIGINT);
  });
  const SupervisionResult result = supervise(children, signals, options);
  interrupter.join();

  EXPECT_EQ(result.stop_requests, 1);
  EXPECT_EQ(result.first_stop_signal, SIGINT);
  EXPECT_FALSE(result.first_failed.has_value());
  for (const SupervisedChild& child : children) {
    EXPECT_TRUE(child.status.succeeded()) << child.status.describe();
    EXPECT_FALSE(child.ended_by_supervisor);  // the user's signal, not the supervisor's kill
  }
  const std::string text = out.text();
  EXPECT_NE(text.find("[c0] got-int\n"), std::string::npos) << text;
  EXPECT_NE(text.find("[c1] got-int\n"), std::string::npos) << text;
  EXPECT_NE(text.find("got SIGINT; forwarding it to the children (a second one kills them)"), std::string::npos)
      << text;
  EXPECT_TRUE(no_children_left());
}

TEST(Supervisor, ChildrenStillRunningAreKilledAndReapedOnUnwind) {
  std::vector<SupervisedChild> children;
  {
    const ReapOnUnwind reap(children);
    start(children, 0, "exec sleep 60", stderr);
  }
  EXPECT_TRUE(children[0].reaped);
  EXPECT_TRUE(no_children_left());
}

}  // namespace
}  // namespace tokbench::process
