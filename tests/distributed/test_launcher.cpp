// The rank launcher against real child processes: /bin/sh scripts that print their environment,
// fail, ignore SIGTERM or trap it, so every path (relay, failure escalation, signal forwarding,
// reaping) runs for real. Timings use a 1 s grace so the whole suite stays around ten seconds.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <cstdlib>
#include <filesystem>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "distributed/launcher.hpp"

namespace tokbench::distributed {
namespace {

// Everything written to a tmpfile() so far.
std::string contents(std::FILE* file) {
  std::fflush(file);
  std::rewind(file);
  std::string text;
  char buffer[4096];
  for (std::size_t n; (n = std::fread(buffer, 1, sizeof buffer, file)) > 0;) text.append(buffer, n);
  return text;
}

std::multiset<std::string> lines_of(const std::string& text) {
  std::multiset<std::string> lines;
  std::istringstream stream(text);
  for (std::string line; std::getline(stream, line);) lines.insert(line);
  return lines;
}

struct Captured {
  LaunchResult result;
  std::string out;
  std::string err;
  double seconds = 0;
};

// Launches `script` under /bin/sh -c as every rank, with stdout/stderr captured.
Captured launch_script(const std::string& script, LaunchOptions options) {
  std::FILE* out = std::tmpfile();
  std::FILE* err = std::tmpfile();
  EXPECT_NE(out, nullptr);
  EXPECT_NE(err, nullptr);
  options.argv = {"/bin/sh", "-c", script};
  options.out = out;
  options.err = err;
  Captured run;
  const auto start = std::chrono::steady_clock::now();
  run.result = launch_ranks(options);
  run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  run.out = contents(out);
  run.err = contents(err);
  std::fclose(out);
  std::fclose(err);
  return run;
}

// True when this process has no child left, exited or not: the launcher reaped every rank.
bool no_children_left() { return ::waitpid(-1, nullptr, WNOHANG) == -1 && errno == ECHILD; }

// A fresh directory for the ranks' readiness marker files, removed with its contents at the end.
class MarkerDir {
 public:
  MarkerDir() {
    char pattern[] = "/tmp/tokbench_launcher_test_XXXXXX";
    if (::mkdtemp(pattern) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
  }
  MarkerDir(const MarkerDir&) = delete;
  MarkerDir& operator=(const MarkerDir&) = delete;
  ~MarkerDir() { std::filesystem::remove_all(path_); }

  const std::string& path() const { return path_; }

  // Waits (10 s at most) until `count` ranks have touched their marker: a signal sent before a
  // rank's `trap` is set would test the shell's default action instead of the launcher.
  void wait_for(std::size_t count) const {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (std::chrono::steady_clock::now() < deadline) {
      const auto entries = std::filesystem::directory_iterator(path_);
      if (static_cast<std::size_t>(std::distance(begin(entries), end(entries))) >= count) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }

 private:
  std::string path_;
};

LaunchOptions ranks(int nproc, double grace = 1) {
  LaunchOptions options;
  options.nproc_per_node = nproc;
  options.failure_grace_seconds = grace;
  return options;
}

TEST(Launcher, TwoRanksGetTheirEnvironmentAndPrefixedOutput) {
  const Captured run = launch_script(
      "echo \"RANK=$RANK WORLD_SIZE=$WORLD_SIZE LOCAL_RANK=$LOCAL_RANK MASTER_PORT=$MASTER_PORT\"; "
      "echo \"err $RANK\" >&2",
      ranks(2));
  EXPECT_EQ(run.result.exit_code, 0) << run.err;
  EXPECT_FALSE(run.result.first_failed_rank.has_value());
  EXPECT_TRUE(run.result.failure.empty());
  ASSERT_EQ(run.result.ranks.size(), 2u);
  EXPECT_EQ(run.result.ranks[0].rank, 0);
  EXPECT_EQ(run.result.ranks[1].rank, 1);

  // Both ranks were given the same port; recover it from rank 0's unprefixed line.
  const std::multiset<std::string> out = lines_of(run.out);
  ASSERT_EQ(out.size(), 2u) << run.out;
  const std::string rank0 = *out.begin();  // "RANK=0 ..." sorts before "[rank 1] ..."
  ASSERT_EQ(rank0.rfind("RANK=0 WORLD_SIZE=2 LOCAL_RANK=0 MASTER_PORT=", 0), 0u) << run.out;
  const std::string port = rank0.substr(rank0.find("MASTER_PORT=") + 12);
  EXPECT_GT(std::stoi(port), 0);
  EXPECT_EQ(out.count("[rank 1] RANK=1 WORLD_SIZE=2 LOCAL_RANK=1 MASTER_PORT=" + port), 1u) << run.out;

  // stderr is prefixed for every rank, rank 0 included.
  EXPECT_EQ(lines_of(run.err), (std::multiset<std::string>{"[rank 0] err 0", "[rank 1] err 1"}));
}

TEST(Launcher, SecondNodeRanksReplaceInheritedVariablesAndEndPartialLines) {
  ASSERT_EQ(::setenv("RANK", "99", 1), 0);  // an outer job's value must not leak through
  LaunchOptions options = ranks(2);
  options.nnodes = 2;
  options.node_rank = 1;
  options.master_addr = "10.0.0.7";
  options.master_port = 29511;
  const Captured run = launch_script(
      "printf '%s' \"$RANK/$WORLD_SIZE/$LOCAL_RANK/$LOCAL_WORLD_SIZE/$GROUP_RANK/$NODE_RANK/"
      "$MASTER_ADDR:$MASTER_PORT/$TORCHELASTIC_RUN_ID/$TOKBENCH_LAUNCHED\"",
      options);
  ::unsetenv("RANK");
  EXPECT_EQ(run.result.exit_code, 0) << run.err;
  EXPECT_EQ(run.result.ranks.at(0).rank, 2);
  EXPECT_EQ(run.result.ranks.at(1).rank, 3);
  // No global rank 0 on this node: both stdouts are prefixed, and the partial lines (printf
  // without newline) arrive whole, each ended by a newline.
  EXPECT_EQ(lines_of(run.out), (std::multiset<std::string>{"[rank 2] 2/4/0/2/1/1/10.0.0.7:29511/tokbench/1",
                                                           "[rank 3] 3/4/1/2/1/1/10.0.0.7:29511/tokbench/1"}));
}

TEST(Launcher, RankZeroStdoutPassesThroughByteExact) {
  const Captured run = launch_script("printf '{\"a\": 1}\\n{\"b\"'", ranks(1));
  EXPECT_EQ(run.result.exit_code, 0);
  EXPECT_EQ(run.out, "{\"a\": 1}\n{\"b\"");
}

TEST(Launcher, StdinIsDevNull) {
  const Captured run = launch_script("if read line; then echo got-input; else echo eof; fi", ranks(1));
  EXPECT_EQ(run.out, "eof\n");
}

TEST(Launcher, KilledRankEndsTheOthers) {
  const Captured run =
      launch_script("if [ \"$RANK\" = 1 ]; then sleep 0.2; kill -9 $$; else sleep 60; fi", ranks(2, 1));
  EXPECT_LT(run.seconds, 20);
  ASSERT_TRUE(run.result.first_failed_rank.has_value());
  EXPECT_EQ(*run.result.first_failed_rank, 1);
  EXPECT_EQ(run.result.ranks[1].signal, 9);
  EXPECT_FALSE(run.result.ranks[1].killed_by_launcher);
  EXPECT_TRUE(run.result.ranks[0].killed_by_launcher);
  EXPECT_EQ(run.result.ranks[0].signal, SIGTERM);  // the grace step ended it, not the SIGKILL one
  EXPECT_EQ(run.result.exit_code, 137);
  EXPECT_TRUE(no_children_left());
  EXPECT_NE(run.result.failure.find("rank 1 was killed by signal 9 (SIGKILL)"), std::string::npos)
      << run.result.failure;
  EXPECT_NE(run.err.find("tokbench launcher: rank 1 was killed by signal 9 (SIGKILL); ending the other ranks "
                         "(grace 1 s)"),
            std::string::npos)
      << run.err;
}

TEST(Launcher, ExitCodeIsTheFailedRanks) {
  const Captured run = launch_script("if [ \"$RANK\" = 0 ]; then exit 3; fi; exit 0", ranks(2, 5));
  EXPECT_EQ(run.result.exit_code, 3);
  ASSERT_TRUE(run.result.first_failed_rank.has_value());
  EXPECT_EQ(*run.result.first_failed_rank, 0);
  EXPECT_EQ(run.result.ranks[0].exit_code, 3);
  EXPECT_EQ(run.result.ranks[1].exit_code, 0);
  EXPECT_FALSE(run.result.ranks[1].killed_by_launcher);
  EXPECT_NE(run.result.failure.find("rank 0 exited with code 3"), std::string::npos) << run.result.failure;
  EXPECT_LT(run.seconds, 5);  // rank 1 ended on its own; nothing waited out the grace
}

TEST(Launcher, RankZeroEndingShortensTheGrace) {
  // Rank 0 writes the job's result and exits; a rank still running then gets the short lead
  // grace, not the long failure grace.
  LaunchOptions options = ranks(2, 30);
  options.lead_exit_grace_seconds = 0.5;
  const Captured run = launch_script("if [ \"$RANK\" = 0 ]; then sleep 0.2; exit 6; fi; sleep 60", options);
  EXPECT_LT(run.seconds, 10);
  EXPECT_EQ(run.result.exit_code, 6);
  EXPECT_TRUE(run.result.ranks[1].killed_by_launcher);
  EXPECT_EQ(run.result.ranks[1].signal, SIGTERM);
  EXPECT_TRUE(no_children_left());
}

TEST(Launcher, StoppedRankIsResumedToTakeSigterm) {
  // Rank 1 stops itself (as a SIGSTOPped or hung-in-debugger rank would be); SIGTERM alone
  // would stay pending until SIGKILL 5 s later, so the launcher sends SIGCONT with it.
  const MarkerDir markers;
  LaunchOptions options = ranks(2, 0.5);
  const Captured run = launch_script("if [ \"$RANK\" = 1 ]; then trap 'exit 9' TERM; touch " + markers.path() +
                                         "/1; kill -STOP $$; sleep 60; fi; until [ -e " + markers.path() +
                                         "/1 ]; do sleep 0.05; done; sleep 0.2; exit 1",
                                     options);
  EXPECT_EQ(run.result.ranks[1].signal, 0);
  EXPECT_EQ(run.result.ranks[1].exit_code, 9);  // its TERM trap ran: it was resumed
  EXPECT_LT(run.seconds, 4.5);                   // not the SIGKILL step
  EXPECT_TRUE(no_children_left());
}

TEST(Launcher, RankIgnoringSigtermIsKilledAfterGracePlusFiveSeconds) {
  // Rank 1 fails only once rank 0 has set its trap, so the grace period surely meets the trap.
  const MarkerDir markers;
  const Captured run = launch_script("if [ \"$RANK\" = 1 ]; then until [ -e " + markers.path() +
                                         "/0 ]; do sleep 0.05; done; exit 1; fi; "
                                         "trap '' TERM; touch " + markers.path() + "/0; sleep 60",
                                     ranks(2, 1));
  EXPECT_EQ(run.result.ranks[0].signal, SIGKILL);
  EXPECT_TRUE(run.result.ranks[0].killed_by_launcher);
  EXPECT_EQ(run.result.exit_code, 1);
  // 1 s grace + 5 s from SIGTERM to SIGKILL after rank 1 failed.
  EXPECT_GT(run.result.ranks[0].seconds - run.result.ranks[1].seconds, 5.9);
  EXPECT_LT(run.seconds, 15);
  EXPECT_NE(run.err.find("sending SIGTERM"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("sending SIGKILL"), std::string::npos) << run.err;
  EXPECT_TRUE(no_children_left());
}

TEST(Launcher, ForwardsSigtermToTheRanksAndRestoresTheHandler) {
  struct sigaction before {};
  ASSERT_EQ(::sigaction(SIGTERM, nullptr, &before), 0);
  const MarkerDir markers;
  std::thread sender([&markers] {
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    markers.wait_for(2);
    ::kill(::getpid(), SIGTERM);
  });
  const Captured run = launch_script("trap 'echo got-term; exit 5' TERM; touch " + markers.path() +
                                         "/$RANK; sleep 30 & wait",
                                     ranks(2, 10));
  sender.join();

  EXPECT_TRUE(run.result.interrupted);
  EXPECT_LT(run.seconds, 10);
  EXPECT_EQ(lines_of(run.out), (std::multiset<std::string>{"got-term", "[rank 1] got-term"}));
  EXPECT_EQ(run.result.exit_code, 5);
  for (const RankExit& exit : run.result.ranks) {
    EXPECT_EQ(exit.exit_code, 5);
    EXPECT_FALSE(exit.killed_by_launcher);  // the forwarded signal is the user's, not a kill
  }
  EXPECT_NE(run.err.find("got SIGTERM; forwarding it"), std::string::npos) << run.err;

  struct sigaction after {};
  ASSERT_EQ(::sigaction(SIGTERM, nullptr, &after), 0);
  EXPECT_EQ(after.sa_handler, before.sa_handler);
}

TEST(Launcher, SecondSignalKillsRanksThatIgnoreTheFirst) {
  const MarkerDir markers;
  std::thread sender([&markers] {
    markers.wait_for(2);
    ::kill(::getpid(), SIGINT);
    std::this_thread::sleep_for(std::chrono::milliseconds(400));
    ::kill(::getpid(), SIGINT);
  });
  const Captured run = launch_script("trap '' INT; touch " + markers.path() + "/$RANK; sleep 30", ranks(2, 10));
  sender.join();

  EXPECT_TRUE(run.result.interrupted);
  EXPECT_LT(run.seconds, 10);
  for (const RankExit& exit : run.result.ranks) {
    EXPECT_EQ(exit.signal, SIGKILL);
    EXPECT_TRUE(exit.killed_by_launcher);
  }
  EXPECT_FALSE(run.result.first_failed_rank.has_value());
  EXPECT_EQ(run.result.exit_code, 128 + SIGINT);  // no rank failed on its own: the launcher's signal
  EXPECT_TRUE(no_children_left());
}

TEST(Launcher, LargeOutputIsRelayedInWholeLines) {
  // Far more than a pipe holds (64 KiB): the relay must keep reading while ranks write, and the
  // two ranks' lines must never mix inside a line.
  constexpr int kLines = 20000;
  const Captured run = launch_script("seq 1 " + std::to_string(kLines), ranks(2));
  EXPECT_EQ(run.result.exit_code, 0);
  long long sum0 = 0;
  long long sum1 = 0;
  int count0 = 0;
  int count1 = 0;
  std::istringstream stream(run.out);
  for (std::string line; std::getline(stream, line);) {
    if (line.rfind("[rank 1] ", 0) == 0) {
      sum1 += std::stoll(line.substr(9));
      ++count1;
    } else {
      ASSERT_EQ(line.find_first_not_of("0123456789"), std::string::npos) << line;
      sum0 += std::stoll(line);
      ++count0;
    }
  }
  const long long expected = 1LL * kLines * (kLines + 1) / 2;
  EXPECT_EQ(count0, kLines);
  EXPECT_EQ(count1, kLines);
  EXPECT_EQ(sum0, expected);
  EXPECT_EQ(sum1, expected);
}

TEST(Launcher, DoesNotWaitForProcessesARankLeftHoldingItsOutput) {
  // The background sleep inherits the rank's stdout and stderr and outlives the rank; the
  // launcher stops reading about 2 s after the rank was reaped instead of waiting 30 s.
  const Captured run = launch_script("sleep 30 & echo $!", ranks(1));
  EXPECT_EQ(run.result.exit_code, 0);
  ASSERT_FALSE(run.out.empty());
  ::kill(std::stoi(run.out), SIGKILL);  // not the launcher's to end; the test cleans up after itself
  EXPECT_LT(run.seconds, 10);
  EXPECT_NE(run.err.find("still hold its output open"), std::string::npos) << run.err;
}

// The message of the std::invalid_argument that validate_launch_options throws, or "".
std::string rejection(const LaunchOptions& options) {
  try {
    validate_launch_options(options);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(Launcher, ValidationNamesTheOption) {
  LaunchOptions valid;
  valid.argv = {"/bin/true"};
  EXPECT_EQ(rejection(valid), "");

  LaunchOptions options = valid;
  options.nproc_per_node = 0;
  EXPECT_NE(rejection(options).find("--nproc-per-node 0"), std::string::npos) << rejection(options);

  options = valid;
  options.nnodes = 2;
  options.node_rank = 2;
  options.master_port = 29500;
  EXPECT_NE(rejection(options).find("--node-rank 2"), std::string::npos) << rejection(options);

  options = valid;
  options.master_port = 70000;
  EXPECT_NE(rejection(options).find("--master-port 70000"), std::string::npos) << rejection(options);

  options = valid;
  options.nnodes = 2;
  options.master_port = 0;
  const std::string message = rejection(options);
  EXPECT_NE(message.find("--master-port 0"), std::string::npos) << message;
  EXPECT_NE(message.find("--nnodes 2"), std::string::npos) << message;
  EXPECT_EQ(message.find('\n'), std::string::npos) << "one line";

  options = valid;
  options.argv.clear();
  EXPECT_NE(rejection(options), "");
}

TEST(Launcher, MissingProgramIsRejectedBeforeAnyFork) {
  LaunchOptions options;
  options.argv = {"/nonexistent/tokbench"};
  EXPECT_THROW(launch_ranks(options), std::runtime_error);
  EXPECT_TRUE(no_children_left());
}

TEST(Launcher, ExecFailureIsReportedBeforeAnyRankRuns) {
  // Executable but not a program execve can run (no #! line): access() passes and execve fails
  // with ENOEXEC. posix_spawn hands that error back to the launcher, which names the program
  // and the reason in one line and leaves no rank behind (two asked for: the first one already
  // fails).
  char path[] = "/tmp/tokbench_launcher_noexec_XXXXXX";
  const int fd = ::mkstemp(path);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::write(fd, "plain text\n", 11), 11);
  ::close(fd);
  ASSERT_EQ(::chmod(path, 0700), 0);
  LaunchOptions options;
  options.argv = {path};
  options.nproc_per_node = 2;
  std::string message;
  try {
    (void)launch_ranks(options);
  } catch (const std::runtime_error& e) {
    message = e.what();
  }
  ::unlink(path);
  EXPECT_EQ(message, "tokbench launcher: cannot execute " + std::string(path) + ": " + std::strerror(ENOEXEC));
  EXPECT_TRUE(no_children_left());
}

// --master-port 0: the launcher listens on the port before any rank starts and rank 0 inherits
// the listening socket (TOKBENCH_STORE_LISTEN_FD), so no other process can take the port
// between its choice and rank 0's store: binding it from rank 0 fails with EADDRINUSE.
// Rank 1 gets no socket.
TEST(Launcher, RankZeroInheritsTheListeningStoreSocket) {
  const Captured run = launch_script(
      "exec python3 -c '\n"
      "import errno, os, socket\n"
      "fd = os.environ.get(\"TOKBENCH_STORE_LISTEN_FD\")\n"
      "port = int(os.environ[\"MASTER_PORT\"])\n"
      "if fd is None:\n"
      "    print(\"no socket\")\n"
      "else:\n"
      "    s = socket.socket(fileno=int(fd))\n"
      "    other = socket.socket()\n"
      "    try:\n"
      "        other.bind((\"127.0.0.1\", port)); taken = \"bindable\"\n"
      "    except OSError as e:\n"
      "        taken = errno.errorcode[e.errno]\n"
      "    print(\"same port\", s.getsockname()[1] == port, \"listening\",\n"
      "          s.getsockopt(socket.SOL_SOCKET, socket.SO_ACCEPTCONN), taken)\n"
      "'",
      ranks(2));
  EXPECT_EQ(run.result.exit_code, 0) << run.err;
  EXPECT_EQ(lines_of(run.out), (std::multiset<std::string>{"same port True listening 1 EADDRINUSE",
                                                            "[rank 1] no socket"}))
      << run.err;
}

TEST(Launcher, FreePortIsBindable) {
  const int port = find_free_port("127.0.0.1");
  ASSERT_GT(port, 0);
  ASSERT_LE(port, 65535);
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  EXPECT_EQ(::bind(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address), 0);
  ::close(fd);
  EXPECT_THROW(find_free_port("256.1.1.1"), std::runtime_error);
}

}  // namespace
}  // namespace tokbench::distributed
