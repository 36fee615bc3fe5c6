// process::spawn, Child and run_captured against real programs (sh, sleep): what a child gets
// (argv without a shell, environment, descriptors, signal dispositions, its own group), how its
// end is waited for, and the bounds of a captured run.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

#include "process/child_process.hpp"

namespace tokbench::process {
namespace {

using namespace std::chrono_literals;

bool no_children_left() { return ::waitpid(-1, nullptr, WNOHANG) == -1 && errno == ECHILD; }

CapturedRun sh(const std::string& script, std::size_t bound = 1 << 20, std::chrono::duration<double> timeout = 30s) {
  return run_captured({"/bin/sh", "-c", script}, bound, timeout);
}

TEST(ChildProcess, ArgvReachesTheProgramUnexpanded) {
  // printf gets each word as it is: no shell between us and it, so $() and quotes stay text.
  const CapturedRun run = run_captured({"printf", "%s|", "$(echo hi)", "a b", "`id`", "'q'"});
  EXPECT_EQ(run.status.exit_code, 0);
  EXPECT_EQ(run.output, "$(echo hi)|a b|`id`|'q'|");
  EXPECT_TRUE(no_children_left());
}

TEST(ChildProcess, ExitCodesAndSignalsAreReported) {
  EXPECT_EQ(sh("exit 3").status.exit_code, 3);
  const CapturedRun killed = sh("kill -9 $$");
  EXPECT_EQ(killed.status.signal, SIGKILL);
  EXPECT_EQ(killed.status.shell_status(), 137);
  EXPECT_EQ(killed.status.describe(), "was killed by signal 9 (SIGKILL)");
}

TEST(ChildProcess, AProgramThatCannotRunIsRefusedInTheCaller) {
  try {
    (void)run_captured({"/nonexistent/program"});
    FAIL() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()), std::string("cannot execute /nonexistent/program: ") + std::strerror(ENOENT));
  }
  EXPECT_TRUE(no_children_left());
}

TEST(ChildProcess, CapturedOutputIsBoundedAndTheCommandStillFinishes) {
  // 1 MB written against a 1000-byte bound: the pipe is drained (no deadlock), the rest dropped.
  const CapturedRun run = sh("head -c 1000000 /dev/zero | tr '\\0' x; echo done >&2", 1000);
  EXPECT_EQ(run.status.exit_code, 0);
  EXPECT_EQ(run.output.size(), 1000u);
  EXPECT_TRUE(run.truncated);
}

TEST(ChildProcess, ACapturedCommandPastItsTimeoutIsEnded) {
  const auto start = std::chrono::steady_clock::now();
  const CapturedRun run = sh("echo started; sleep 60", 1 << 20, 0.5s);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_TRUE(run.timed_out);
  EXPECT_EQ(run.status.signal, SIGTERM);
  EXPECT_EQ(run.output, "started\n");
  EXPECT_LT(seconds, 10);
  EXPECT_TRUE(no_children_left());
}

TEST(ChildProcess, OwnProcessGroupAndDefaultDispositions) {
  // The parent ignores SIGINT; the child must not inherit that, and leads a group of its own.
  struct sigaction ignore {}, before {};
  ignore.sa_handler = SIG_IGN;
  ::sigaction(SIGINT, &ignore, &before);
  const CapturedRun run = sh("echo $$ $(ps -o pgid= -p $$); grep SigIgn /proc/$$/status");
  ::sigaction(SIGINT, &before, nullptr);
  ASSERT_EQ(run.status.exit_code, 0) << run.output;
  const auto space = run.output.find(' ');
  const auto newline = run.output.find('\n');
  EXPECT_EQ(run.output.substr(0, space), run.output.substr(space + 1, newline - space - 1)) << run.output;
  const unsigned long long ignored = std::strtoull(run.output.substr(run.output.find(':') + 1).c_str(), nullptr, 16);
  EXPECT_EQ(ignored & (1ull << (SIGINT - 1)), 0u) << run.output;
}

TEST(ChildProcess, TheInheritedDescriptorIsTheOnlyOneKept) {
  int kept[2], other[2];
  ASSERT_EQ(::pipe2(kept, O_CLOEXEC), 0);
  ASSERT_EQ(::pipe2(other, O_CLOEXEC), 0);
  int out[2];
  ASSERT_EQ(::pipe2(out, O_CLOEXEC), 0);
  SpawnSpec spec;
  spec.argv = {"/bin/sh", "-c", "echo to-three >&3; ls /proc/self/fd | sort -n | tr '\\n' ' '"};
  spec.stdout_fd = out[1];
  spec.inherited_fd = kept[1];
  Child child(spec);
  ::close(out[1]);
  ::close(kept[1]);
  EXPECT_EQ(child.wait().exit_code, 0);
  char buffer[256] = {};
  ASSERT_GT(::read(kept[0], buffer, sizeof buffer - 1), 0);
  EXPECT_EQ(std::string(buffer), "to-three\n");
  char listing[256] = {};
  ASSERT_GT(::read(out[0], listing, sizeof listing - 1), 0);
  // 0, 1, 2, 3 and the descriptor ls itself opens on /proc/self/fd; none of the other pipes.
  EXPECT_EQ(std::string(listing).rfind("0 1 2 3 ", 0), 0u) << listing;
  EXPECT_EQ(std::string(listing).find(std::to_string(other[0]) + " "), std::string::npos) << listing;
  for (int fd : {kept[0], other[0], other[1], out[0]}) ::close(fd);
}

TEST(ChildProcess, TheParentDeathRequestIsAddressedToTheChildOnly) {
  ::setenv(kParentPidEnv, "1", 1);  // as if this process had been asked by its own parent
  int out[2];
  ASSERT_EQ(::pipe2(out, O_CLOEXEC), 0);
  SpawnSpec spec;
  spec.argv = {"/bin/sh", "-c", "echo \"$TOKBENCH_PARENT_PID\""};
  spec.stdout_fd = out[1];
  Child asked(spec);
  EXPECT_EQ(asked.wait().exit_code, 0);
  spec.die_with_parent = false;
  Child not_asked(spec);
  EXPECT_EQ(not_asked.wait().exit_code, 0);
  ::close(out[1]);
  ::unsetenv(kParentPidEnv);
  char buffer[64] = {};
  ASSERT_GT(::read(out[0], buffer, sizeof buffer - 1), 0);
  ::close(out[0]);
  EXPECT_EQ(std::string(buffer), std::to_string(::getpid()) + "\n\n");
}

std::atomic<int> g_woken{0};
extern "C" void note_signal(int) { g_woken.store(1); }

TEST(ChildProcess, WaitUntilWakesOnTheChildsEndAndOnAStopSignal) {
  SpawnSpec spec;
  spec.argv = {"/bin/sh", "-c", "sleep 0.2"};
  Child quick(spec);
  const auto start = std::chrono::steady_clock::now();
  const auto status = quick.wait_until(std::chrono::steady_clock::now() + 30s);
  ASSERT_TRUE(status.has_value());
  EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);

  struct sigaction action {}, before {};
  action.sa_handler = note_signal;
  sigemptyset(&action.sa_mask);
  ::sigaction(SIGUSR1, &action, &before);
  g_woken.store(0);
  spec.argv = {"sleep", "60"};
  Child slow(spec);
  std::thread sender([] {
    std::this_thread::sleep_for(200ms);
    ::kill(::getpid(), SIGUSR1);
  });
  const auto waited_from = std::chrono::steady_clock::now();
  const auto none = slow.wait_until(std::chrono::steady_clock::now() + 60s, [] { return g_woken.load() != 0; }, {SIGUSR1});
  sender.join();
  ::sigaction(SIGUSR1, &before, nullptr);
  EXPECT_FALSE(none.has_value());
  EXPECT_LT(std::chrono::steady_clock::now() - waited_from, 10s);
  slow.signal_group(SIGTERM);
  EXPECT_EQ(slow.wait().signal, SIGTERM);
}

TEST(ChildProcess, AChildLeftRunningIsKilledAndReapedByItsOwner) {
  {
    SpawnSpec spec;
    spec.argv = {"sleep", "60"};
    Child forgotten(spec);
  }
  EXPECT_TRUE(no_children_left());
}

}  // namespace
}  // namespace tokbench::process
