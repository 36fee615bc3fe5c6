// Rank launcher: N ranks started through process::spawn (posix_spawn: no code of ours runs
// between fork and exec), a poll() loop over their pipes and a self-pipe, and the failure
// escalation (grace, SIGTERM, SIGKILL).
#include "distributed/launcher.hpp"

#include "process/child_process.hpp"
#include "process/unique_fd.hpp"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/wait.h>
#if defined(__linux__)
#include <sys/prctl.h>
#endif
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string_view>
#include <system_error>
#include <tuple>
#include <utility>

extern char** environ;

namespace tokbench::distributed {
namespace {

using Clock = std::chrono::steady_clock;

// After the grace period, SIGTERM gets this long to end a rank before SIGKILL (torchrun uses the
// same two-step stop so that ranks can flush logs and release GPU memory cleanly).
constexpr std::chrono::seconds kTermToKill{5};
// A rank that leaves background processes behind can end while they still hold its pipes open.
// Their output gets this long after the rank was reaped; then the launcher stops reading, so it
// never waits on a pipe that no rank owns any more.
constexpr std::chrono::seconds kOrphanDrain{2};
// Longest poll() wait. SIGCHLD wakes the loop when a rank ends; this bound only matters when a
// wake-up was lost (a full self-pipe, or another thread replaced the SIGCHLD handler).
constexpr int kMaxPollMs = 250;
// A "line" longer than this (a progress bar redrawn with '\r', binary output) is written out
// anyway, so one rank cannot make the launcher hold unbounded memory. Large enough for rank 0's
// one-line JSON report, which must not be split by another rank's line.
constexpr std::size_t kMaxPendingLine = 1024 * 1024;
constexpr std::size_t kReadChunk = 64 * 1024;
// Reading a just-reaped rank's pipes to their end is bounded too: background processes it left
// behind could keep writing forever.
constexpr int kMaxDrainChunks = 64;

constexpr std::array<int, 3> kHandledSignals{SIGINT, SIGTERM, SIGCHLD};

// ---------------------------------------------------------------------------------------------
// Signal handling: the only global mutable state. The handler writes the signal number into a
// non-blocking self-pipe that the poll() loop watches; both atomics are lock-free, so the
// handler touches nothing else.
std::atomic<int> g_wake_fd{-1};
// Handlers currently running; SignalScope waits for zero before closing the pipe so that a
// handler already past its load of g_wake_fd never writes into a closed (or reused) descriptor.
std::atomic<int> g_handlers_running{0};
static_assert(std::atomic<int>::is_always_lock_free, "the signal handler needs a lock-free int");

void on_signal(int signal_number) {
  g_handlers_running.fetch_add(1);
  const int saved_errno = errno;  // the interrupted code may be about to read errno
  const int fd = g_wake_fd.load();
  if (fd >= 0) {
    const auto byte = static_cast<unsigned char>(signal_number);
    // A full pipe drops the byte: the loop is then awake already and will poll again soon.
    [[maybe_unused]] ssize_t written = ::write(fd, &byte, 1);
  }
  errno = saved_errno;
  g_handlers_running.fetch_sub(1);
}

// ---------------------------------------------------------------------------------------------
// Small POSIX helpers.

[[noreturn]] void throw_errno(const std::string& what) {
  throw std::system_error(errno, std::generic_category(), "tokbench launcher: " + what);
}

using process::Fd;

// The child dup2()s its pipes onto 0, 1 and 2. A launcher descriptor that is itself 0..2 (the
// parent runs with a closed stdin or stdout) would be overwritten by an earlier dup2, so every
// descriptor the launcher hands to a child is moved above them.
Fd above_stdio(Fd fd) {
  if (fd.get() > STDERR_FILENO) return fd;
  const int moved = ::fcntl(fd.get(), F_DUPFD_CLOEXEC, STDERR_FILENO + 1);
  if (moved < 0) throw_errno("fcntl(F_DUPFD_CLOEXEC)");
  return Fd(moved);
}

void set_nonblocking(const Fd& fd) {
  const int flags = ::fcntl(fd.get(), F_GETFL);
  if (flags < 0 || ::fcntl(fd.get(), F_SETFL, flags | O_NONBLOCK) < 0) throw_errno("fcntl(O_NONBLOCK)");
}

struct Pipe {
  Fd read;
  Fd write;
};

// Close-on-exec on both ends: rank k must not inherit rank j's pipes, or rank j's output would
// only reach EOF once rank k ends too.
Pipe make_pipe() {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) throw_errno("pipe");
  Fd read_end(fds[0]);
  Fd write_end(fds[1]);
  return Pipe{above_stdio(std::move(read_end)), above_stdio(std::move(write_end))};
}

Fd open_dev_null() {
  Fd fd(::open("/dev/null", O_RDONLY | O_CLOEXEC));
  if (!fd.is_open()) throw_errno("open /dev/null");
  return above_stdio(std::move(fd));
}

// ---------------------------------------------------------------------------------------------
// Describing how a rank ended.

using process::signal_name;

bool ended_badly(const RankExit& exit) { return exit.signal != 0 || exit.exit_code != 0; }

// "exited with code 3" or "was killed by signal 9 (SIGKILL)".
std::string describe_end(const RankExit& exit) { return process::ExitStatus{exit.exit_code, exit.signal}.describe(); }

// Process exit status convention: a signal death reads as 128 + the signal, as in a shell.
int exit_status_of(const RankExit& exit) { return process::ExitStatus{exit.exit_code, exit.signal}.shell_status(); }

// Shortest round text for a duration in seconds: "30", "1.5", "0.25".
std::string format_seconds(double seconds) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", seconds);
  return text;
}

std::string format_tenths(double seconds) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f", seconds);
  return text;
}

double seconds_between(Clock::time_point from, Clock::time_point to) {
  return std::chrono::duration<double>(to - from).count();
}

// One launcher message: a whole line, flushed at once, so it cannot land inside a rank's line.
void launcher_message(std::FILE* sink, const std::string& text) {
  const std::string line = "tokbench launcher: " + text + "\n";
  std::fwrite(line.data(), 1, line.size(), sink);
  std::fflush(sink);
}

// ---------------------------------------------------------------------------------------------
// SignalScope: installs the self-pipe handlers for the duration of one launch.

class SignalScope {
 public:
  SignalScope() {
    Pipe pipe = make_pipe();
    set_nonblocking(pipe.read);
    // Non-blocking write end: a handler must never block, even when nobody drains the pipe.
    set_nonblocking(pipe.write);
    int no_launch = -1;
    if (!g_wake_fd.compare_exchange_strong(no_launch, pipe.write.get())) {
      throw std::logic_error("tokbench launcher: launch_ranks is already running in this process");
    }
    read_ = std::move(pipe.read);
    write_ = std::move(pipe.write);
    install_handlers();
  }
  SignalScope(const SignalScope&) = delete;
  SignalScope& operator=(const SignalScope&) = delete;
  ~SignalScope() { uninstall(); }

  int wake_fd() const { return read_.get(); }

  // The signals received since the last call, in arrival order (SIGCHLD included).
  std::vector<int> take_signals() {
    std::vector<int> signals;
    unsigned char bytes[64];
    for (;;) {
      const ssize_t n = ::read(read_.get(), bytes, sizeof bytes);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;  // EAGAIN: drained
      signals.insert(signals.end(), bytes, bytes + n);
    }
    return signals;
  }

 private:
  void install_handlers() {
    struct sigaction action {};
    action.sa_handler = on_signal;
    sigemptyset(&action.sa_mask);
    // SA_RESTART spares other threads' system calls the EINTR; poll() here is woken regardless.
    // SA_NOCLDSTOP: a stopped or continued rank is not an event the loop acts on.
    action.sa_flags = SA_RESTART | SA_NOCLDSTOP;
    for (std::size_t i = 0; i < kHandledSignals.size(); ++i) {
      if (::sigaction(kHandledSignals[i], &action, &previous_[i]) != 0) {
        const int saved_errno = errno;
        uninstall();
        errno = saved_errno;
        throw_errno("sigaction");
      }
      ++installed_;
    }
  }

  void uninstall() {
    for (std::size_t i = 0; i < installed_; ++i) ::sigaction(kHandledSignals[i], &previous_[i], nullptr);
    installed_ = 0;
    // Order matters: with the handlers gone, clear the fd, then wait out any handler that loaded
    // it before the clear; only then may the pipe close (the Fd members, after this body).
    g_wake_fd.store(-1);
    while (g_handlers_running.load() != 0) ::sched_yield();
  }

  Fd read_;
  Fd write_;
  std::size_t installed_ = 0;
  std::array<struct sigaction, kHandledSignals.size()> previous_{};
};

// ---------------------------------------------------------------------------------------------
// Starting one rank.

// The parent's environment with torchrun's variables set (replacing any inherited values, so a
// launcher started from inside another launched job does not leak the outer job's RANK).
std::vector<std::string> rank_environment(const LaunchOptions& options, int local_rank, int port,
                                          bool store_rank) {
  const int global_rank = options.node_rank * options.nproc_per_node + local_rank;
  std::vector<std::pair<std::string, std::string>> ours = {
      {"RANK", std::to_string(global_rank)},
      {"WORLD_SIZE", std::to_string(options.nnodes * options.nproc_per_node)},
      {"LOCAL_RANK", std::to_string(local_rank)},
      {"LOCAL_WORLD_SIZE", std::to_string(options.nproc_per_node)},
      {"GROUP_RANK", std::to_string(options.node_rank)},
      {"NODE_RANK", std::to_string(options.node_rank)},
      {"MASTER_ADDR", options.master_addr},
      {"MASTER_PORT", std::to_string(port)},
      {"TORCHELASTIC_RUN_ID", "tokbench"},
      {"TOKBENCH_LAUNCHED", "1"},
      {"TOKBENCH_STORE_LISTEN_FD", ""},  // never inherited from an outer job
  };
  if (store_rank) ours.back().second = std::to_string(process::kInheritedFd);
  else ours.pop_back();
  std::vector<std::string> environment;
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    const std::string_view text(*entry);
    const std::string_view name = text.substr(0, text.find('='));
    const bool replaced = std::any_of(ours.begin(), ours.end(), [&](const auto& kv) { return kv.first == name; });
    if (!replaced) environment.emplace_back(text);
  }
  for (const auto& [name, value] : ours) environment.push_back(name + "=" + value);
  return environment;
}

// Starts one rank; returns its pid. Its own process group: a terminal's Ctrl-C reaches only the
// launcher, which forwards it once, and the launcher can signal a rank together with any
// processes the rank started. It dies with the launcher (die_with_parent): a rank must not
// outlive a launcher that was killed (SIGKILL cannot be forwarded), or it would train on,
// unobserved, beside the rerun that replaces it. It starts with the default disposition of every
// signal the launcher handles and an empty signal mask.
pid_t spawn_rank(const LaunchOptions& options, int local_rank, int port, int store_listen_fd, const Fd& dev_null,
                 const Pipe& out, const Pipe& err) {
  process::SpawnSpec spec;
  spec.argv = options.argv;
  spec.environment = rank_environment(options, local_rank, port, store_listen_fd >= 0);
  spec.stdin_fd = dev_null.get();
  spec.stdout_fd = out.write.get();
  spec.stderr_fd = err.write.get();
  spec.inherited_fd = store_listen_fd;
  spec.default_signals = {kHandledSignals.begin(), kHandledSignals.end()};
  spec.default_signals.push_back(SIGPIPE);
  try {
    return process::spawn(spec);
  } catch (const std::runtime_error& e) {
    throw std::runtime_error(std::string("tokbench launcher: ") + e.what());
  }
}

// ---------------------------------------------------------------------------------------------
// Relaying output.

// One of a rank's two output pipes and the text read from it that does not yet end a line.
struct OutputStream {
  Fd fd;
  std::string pending;
  std::FILE* sink = nullptr;
  std::string prefix;  // empty: passed through unprefixed
};

// Writes text (which ends with '\n' unless it is a stream's byte-exact remainder) to the sink.
void emit(const OutputStream& stream, std::string_view text) {
  if (!stream.prefix.empty()) std::fwrite(stream.prefix.data(), 1, stream.prefix.size(), stream.sink);
  std::fwrite(text.data(), 1, text.size(), stream.sink);
}

// Writes every complete line of stream.pending and keeps the partial tail. Whole lines only, so
// two ranks writing to the same sink never interleave inside a line.
void emit_complete_lines(OutputStream& stream) {
  std::size_t start = 0;
  for (std::size_t newline; (newline = stream.pending.find('\n', start)) != std::string::npos; start = newline + 1) {
    emit(stream, std::string_view(stream.pending).substr(start, newline + 1 - start));
  }
  stream.pending.erase(0, start);
  if (stream.pending.size() >= kMaxPendingLine) {
    // A prefixed piece gets its own line; the unprefixed stream stays byte-exact.
    if (!stream.prefix.empty()) stream.pending.push_back('\n');
    emit(stream, stream.pending);
    stream.pending.clear();
  }
  std::fflush(stream.sink);
}

// At end of stream: a prefixed partial line gets a newline so that the next prefix starts a
// line; an unprefixed one stays byte-exact (rank 0's stdout may be JSON a caller parses).
void emit_remainder(OutputStream& stream) {
  if (stream.pending.empty()) return;
  if (!stream.prefix.empty()) stream.pending.push_back('\n');
  emit(stream, stream.pending);
  stream.pending.clear();
  std::fflush(stream.sink);
}

enum class ReadOutcome { data, would_block, end };

// One read() of what the pipe holds now. A read error other than EAGAIN/EINTR counts as the end:
// nothing more will come from that pipe.
ReadOutcome read_chunk(OutputStream& stream, std::vector<char>& buffer) {
  for (;;) {
    const ssize_t n = ::read(stream.fd.get(), buffer.data(), buffer.size());
    if (n > 0) {
      stream.pending.append(buffer.data(), static_cast<std::size_t>(n));
      emit_complete_lines(stream);
      return ReadOutcome::data;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return ReadOutcome::would_block;
    return ReadOutcome::end;
  }
}

void close_stream(OutputStream& stream) {
  emit_remainder(stream);
  stream.fd.reset();
}

// ---------------------------------------------------------------------------------------------
// The supervision loop.

struct RankState {
  RankExit exit;
  pid_t pid = -1;
  bool reaped = false;
  bool signaled_by_launcher = false;
  Clock::time_point start;
  Clock::time_point end;
  std::array<OutputStream, 2> streams;  // stdout, stderr
};

// Kills and reaps every rank not yet reaped when the launch unwinds through an exception (a fork
// that failed half-way, bad_alloc in the loop): the launcher never leaves ranks or zombies behind.
class ReapOnUnwind {
 public:
  explicit ReapOnUnwind(std::vector<RankState>& ranks) : ranks_(ranks) {}
  ReapOnUnwind(const ReapOnUnwind&) = delete;
  ReapOnUnwind& operator=(const ReapOnUnwind&) = delete;
  ~ReapOnUnwind() {
    for (RankState& rank : ranks_) {
      if (rank.pid <= 0 || rank.reaped) continue;
      ::kill(-rank.pid, SIGKILL);
      ::kill(rank.pid, SIGKILL);
      while (::waitpid(rank.pid, nullptr, 0) < 0 && errno == EINTR) {
      }
      rank.reaped = true;
    }
  }

 private:
  std::vector<RankState>& ranks_;
};

// Escalation after the first failure: wait, then SIGTERM, then SIGKILL.
enum class Escalation { none, grace, terminating, killed };

class Supervisor {
 public:
  Supervisor(const LaunchOptions& options, SignalScope& signals, std::vector<RankState>& ranks)
      : options_(options), signals_(signals), ranks_(ranks), buffer_(kReadChunk) {}

  LaunchResult run() {
    while (!finished()) {
      wait_and_relay();
      handle_signals();
      reap_ended_ranks();
      advance_escalation();
      stop_reading_orphaned_pipes();
    }
    return result();
  }

 private:
  bool finished() const {
    return std::all_of(ranks_.begin(), ranks_.end(), [](const RankState& rank) {
      return rank.reaped && !rank.streams[0].fd.is_open() && !rank.streams[1].fd.is_open();
    });
  }

  // Blocks in poll() until output, a signal (SIGCHLD included) or the next deadline, and
  // relays one chunk from every readable pipe (one chunk each: a chatty rank cannot starve the
  // others).
  void wait_and_relay() {
    std::vector<pollfd> fds;
    std::vector<OutputStream*> streams;
    fds.push_back({signals_.wake_fd(), POLLIN, 0});
    for (RankState& rank : ranks_) {
      for (OutputStream& stream : rank.streams) {
        if (!stream.fd.is_open()) continue;
        fds.push_back({stream.fd.get(), POLLIN, 0});
        streams.push_back(&stream);
      }
    }
    const int ready = ::poll(fds.data(), fds.size(), poll_timeout_ms());
    if (ready < 0) {
      if (errno == EINTR) return;
      throw_errno("poll");
    }
    for (std::size_t i = 0; i < streams.size(); ++i) {
      // POLLHUP without POLLIN is the writer gone with nothing left: read() then returns 0.
      if ((fds[i + 1].revents & (POLLIN | POLLHUP | POLLERR | POLLNVAL)) == 0) continue;
      if (read_chunk(*streams[i], buffer_) == ReadOutcome::end) close_stream(*streams[i]);
    }
  }

  // Time until the nearest deadline (escalation step or orphan drain), bounded by kMaxPollMs.
  int poll_timeout_ms() const {
    Clock::time_point next = Clock::now() + std::chrono::milliseconds(kMaxPollMs);
    if (escalation_ == Escalation::grace || escalation_ == Escalation::terminating) {
      next = std::min(next, escalation_deadline_);
    }
    for (const RankState& rank : ranks_) {
      if (rank.reaped && (rank.streams[0].fd.is_open() || rank.streams[1].fd.is_open())) {
        next = std::min(next, rank.end + kOrphanDrain);
      }
    }
    const auto wait = std::chrono::ceil<std::chrono::milliseconds>(next - Clock::now());
    return static_cast<int>(std::max<std::chrono::milliseconds::rep>(0, wait.count()));
  }

  // SIGINT/SIGTERM to the launcher: the first is forwarded to every rank (tokbench ranks then
  // stop at the end of their iteration and report); a second kills them, as a second Ctrl-C
  // kills a single tokbench run. SIGCHLD only woke the loop; reaping follows.
  void handle_signals() {
    for (const int signal_number : signals_.take_signals()) {
      if (signal_number != SIGINT && signal_number != SIGTERM) continue;
      ++interrupts_;
      if (interrupts_ == 1) {
        interrupt_signal_ = signal_number;
        launcher_message(options_.err, std::string("got ") + signal_name(signal_number) +
                                           "; forwarding it to the ranks (a second one kills them)");
        signal_running_ranks(signal_number, /*by_launcher=*/false);
      } else if (interrupts_ == 2) {
        launcher_message(options_.err, std::string("got ") + signal_name(signal_number) + " again; killing the ranks");
        signal_running_ranks(SIGKILL, /*by_launcher=*/true);
        escalation_ = Escalation::killed;
      }
    }
  }

  // Signals each running rank's process group (the rank and whatever it started); a rank that
  // moved to a group of its own (setsid) is signalled by pid.
  void signal_running_ranks(int signal_number, bool by_launcher) {
    for (RankState& rank : ranks_) {
      if (rank.reaped) continue;
      if (::kill(-rank.pid, signal_number) != 0) ::kill(rank.pid, signal_number);
      if (by_launcher) rank.signaled_by_launcher = true;
    }
  }

  void reap_ended_ranks() {
    for (RankState& rank : ranks_) {
      if (rank.reaped) continue;
      int status = 0;
      pid_t reaped = 0;
      do {
        reaped = ::waitpid(rank.pid, &status, WNOHANG);
      } while (reaped < 0 && errno == EINTR);
      if (reaped == 0) continue;  // still running
      if (reaped < 0) {
        // ECHILD: another thread reaped it (waitpid(-1) elsewhere). Its status is gone; count it
        // as a failure rather than wait for a process that no longer exists.
        status = -1;
      }
      record_end(rank, status);
    }
  }

  void record_end(RankState& rank, int status) {
    rank.reaped = true;
    rank.end = Clock::now();
    RankExit& exit = rank.exit;
    exit.seconds = seconds_between(rank.start, rank.end);
    exit.killed_by_launcher = rank.signaled_by_launcher;
    if (status == -1) {
      exit.exit_code = 1;
    } else if (WIFSIGNALED(status)) {
      exit.signal = WTERMSIG(status);
    } else {
      exit.exit_code = WEXITSTATUS(status);
    }
    // Its last output first, so that it precedes the launcher's line about its end.
    for (OutputStream& stream : rank.streams) drain(stream);
    if (ended_badly(exit) && !exit.killed_by_launcher && !first_failed_) on_first_failure(rank);
    if (exit.rank == 0 && options_.lead_exit_grace_seconds >= 0) on_lead_exit();
  }

  // Rank 0 has reported the job's ending: the others get a short grace, not the full one.
  void on_lead_exit() {
    const bool others_running = std::any_of(ranks_.begin(), ranks_.end(), [](const RankState& r) { return !r.reaped; });
    if (!others_running) return;
    const Clock::time_point deadline =
        Clock::now() + std::chrono::duration_cast<Clock::duration>(
                           std::chrono::duration<double>(options_.lead_exit_grace_seconds));
    if (escalation_ == Escalation::none) {
      escalation_ = Escalation::grace;
      escalation_deadline_ = deadline;
    } else if (escalation_ == Escalation::grace) {
      escalation_deadline_ = std::min(escalation_deadline_, deadline);
    }
  }

  // Reads what a just-reaped rank left in its pipe, up to EOF (then closes it) or kMaxDrainChunks.
  void drain(OutputStream& stream) {
    for (int i = 0; i < kMaxDrainChunks && stream.fd.is_open(); ++i) {
      const ReadOutcome outcome = read_chunk(stream, buffer_);
      if (outcome == ReadOutcome::end) close_stream(stream);
      if (outcome != ReadOutcome::data) return;
    }
  }

  void on_first_failure(const RankState& rank) {
    first_failed_ = rank.exit.rank;
    failure_ = "rank " + std::to_string(rank.exit.rank) + " " + describe_end(rank.exit) + " after " +
               format_tenths(rank.exit.seconds) + " s";
    const bool others_running = std::any_of(ranks_.begin(), ranks_.end(), [](const RankState& r) { return !r.reaped; });
    if (!others_running || escalation_ != Escalation::none) {
      launcher_message(options_.err, "rank " + std::to_string(rank.exit.rank) + " " + describe_end(rank.exit));
      return;
    }
    launcher_message(options_.err, "rank " + std::to_string(rank.exit.rank) + " " + describe_end(rank.exit) +
                                       "; ending the other ranks (grace " +
                                       format_seconds(options_.failure_grace_seconds) + " s)");
    escalation_ = Escalation::grace;
    escalation_deadline_ = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                              std::chrono::duration<double>(options_.failure_grace_seconds));
  }

  // Grace over: SIGTERM; kTermToKill later: SIGKILL. Ranks that end on their own meanwhile are
  // simply reaped; the steps only touch those still running.
  void advance_escalation() {
    const Clock::time_point now = Clock::now();
    if (escalation_ == Escalation::grace && now >= escalation_deadline_) {
      announce_escalation("SIGTERM");
      signal_running_ranks(SIGTERM, /*by_launcher=*/true);
      // A stopped rank (SIGSTOP, a debugger detached) holds SIGTERM pending until resumed.
      signal_running_ranks(SIGCONT, /*by_launcher=*/true);
      escalation_ = Escalation::terminating;
      escalation_deadline_ = now + kTermToKill;
    } else if (escalation_ == Escalation::terminating && now >= escalation_deadline_) {
      announce_escalation("SIGKILL");
      signal_running_ranks(SIGKILL, /*by_launcher=*/true);
      escalation_ = Escalation::killed;
    }
  }

  void announce_escalation(const char* signal_text) {
    std::string running;
    for (const RankState& rank : ranks_) {
      if (rank.reaped) continue;
      running += (running.empty() ? "" : ", ") + std::to_string(rank.exit.rank);
    }
    if (running.empty()) return;
    const std::string why = first_failed_ ? "after rank " + std::to_string(*first_failed_) + " failed"
                                          : std::string("after rank 0 ended");
    launcher_message(options_.err, "still running " + why + ": rank(s) " + running + "; sending " + signal_text);
  }

  // Pipes of a reaped rank that are still open belong to processes it left behind; after
  // kOrphanDrain the launcher stops reading them (see kOrphanDrain).
  void stop_reading_orphaned_pipes() {
    const Clock::time_point now = Clock::now();
    for (RankState& rank : ranks_) {
      if (!rank.reaped || now < rank.end + kOrphanDrain) continue;
      for (OutputStream& stream : rank.streams) {
        if (!stream.fd.is_open()) continue;
        drain(stream);
        if (!stream.fd.is_open()) continue;
        launcher_message(options_.err, "rank " + std::to_string(rank.exit.rank) +
                                           " ended but processes it started still hold its output open; "
                                           "no longer relaying it");
        close_stream(stream);
      }
    }
  }

  LaunchResult result() const {
    LaunchResult result;
    for (const RankState& rank : ranks_) result.ranks.push_back(rank.exit);
    result.first_failed_rank = first_failed_;
    result.failure = failure_;
    result.interrupted = interrupts_ > 0;
    if (first_failed_) {
      const auto failed = std::find_if(result.ranks.begin(), result.ranks.end(),
                                       [&](const RankExit& exit) { return exit.rank == *first_failed_; });
      result.exit_code = exit_status_of(*failed);
    } else if (result.interrupted) {
      // Every rank ended cleanly or was killed by the second signal: the run was still cut short.
      const bool all_clean = std::none_of(result.ranks.begin(), result.ranks.end(), ended_badly);
      result.exit_code = all_clean ? 0 : 128 + interrupt_signal_;
    }
    return result;
  }

  const LaunchOptions& options_;
  SignalScope& signals_;
  std::vector<RankState>& ranks_;
  std::vector<char> buffer_;
  Escalation escalation_ = Escalation::none;
  Clock::time_point escalation_deadline_;
  std::optional<int> first_failed_;
  std::string failure_;
  int interrupts_ = 0;
  int interrupt_signal_ = 0;
};

// Fails early, with the reason, instead of N ranks each exiting 127.
void check_executable(const std::string& path) {
  if (::access(path.c_str(), X_OK) != 0) throw_errno("cannot execute " + path);
}

// Starts local rank `local_rank` with its pipes and environment and fills in its state.
void start_rank(const LaunchOptions& options, int local_rank, int port, int store_listen_fd, const Fd& dev_null,
                RankState& rank) {
  Pipe out = make_pipe();
  Pipe err = make_pipe();
  set_nonblocking(out.read);
  set_nonblocking(err.read);
  rank.exit.rank = options.node_rank * options.nproc_per_node + local_rank;
  rank.start = Clock::now();
  rank.pid = spawn_rank(options, local_rank, port, store_listen_fd, dev_null, out, err);
  // The parent's copies of the write ends close here (Pipe destructors), so EOF on a read end
  // means the rank and everything it started have closed theirs.
  const bool pass_through = !options.prefix_output || (rank.exit.rank == 0);
  const std::string prefix = options.prefix_output ? "[rank " + std::to_string(rank.exit.rank) + "] " : "";
  rank.streams[0] = OutputStream{std::move(out.read), {}, options.out, pass_through ? "" : prefix};
  rank.streams[1] = OutputStream{std::move(err.read), {}, options.err, prefix};
}

}  // namespace

void validate_launch_options(const LaunchOptions& options) {
  const auto fail = [](const std::string& message) { throw std::invalid_argument(message); };
  if (options.nproc_per_node < 1) {
    fail("--nproc-per-node " + std::to_string(options.nproc_per_node) + ": must be at least 1");
  }
  if (options.nnodes < 1) fail("--nnodes " + std::to_string(options.nnodes) + ": must be at least 1");
  if (options.node_rank < 0 || options.node_rank >= options.nnodes) {
    fail("--node-rank " + std::to_string(options.node_rank) + ": must be from 0 to " +
         std::to_string(options.nnodes - 1) + " (below --nnodes " + std::to_string(options.nnodes) + ")");
  }
  if (options.nproc_per_node > std::numeric_limits<int>::max() / options.nnodes) {
    fail("--nproc-per-node " + std::to_string(options.nproc_per_node) + " with --nnodes " +
         std::to_string(options.nnodes) + ": the world size must fit in an int");
  }
  if (options.master_addr.empty()) fail("--master-addr '': must be a host name or IP address");
  if (options.master_port < 0 || options.master_port > 65535) {
    fail("--master-port " + std::to_string(options.master_port) + ": must be from 0 to 65535 (0 picks a free port)");
  }
  if (options.master_port == 0 && options.nnodes != 1) {
    fail("--master-port 0 (pick a free port) works only with --nnodes 1; with --nnodes " +
         std::to_string(options.nnodes) + " give every node the same port from 1 to 65535");
  }
  if (!std::isfinite(options.failure_grace_seconds) || options.failure_grace_seconds < 0) {
    fail("failure grace " + format_seconds(options.failure_grace_seconds) + " s: must be a finite number >= 0");
  }
  if (options.argv.empty() || options.argv.front().empty()) fail("no program to launch: argv is empty");
  if (options.out == nullptr || options.err == nullptr) fail("LaunchOptions::out and ::err must not be null");
}

namespace {

// A TCP socket bound to a port the kernel picks on addr; listening when `listen` is set.
// Returns the socket and its port.
std::pair<Fd, int> bind_free_port(const std::string& addr, bool listen) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE;
  addrinfo* found = nullptr;
  if (const int rc = ::getaddrinfo(addr.c_str(), "0", &hints, &found); rc != 0) {
    throw std::runtime_error("tokbench launcher: cannot resolve --master-addr " + addr + ": " + ::gai_strerror(rc));
  }
  int last_errno = 0;
  for (const addrinfo* candidate = found; candidate != nullptr; candidate = candidate->ai_next) {
    Fd socket_fd(::socket(candidate->ai_family, candidate->ai_socktype | SOCK_CLOEXEC, candidate->ai_protocol));
    if (!socket_fd.is_open() || ::bind(socket_fd.get(), candidate->ai_addr, candidate->ai_addrlen) != 0 ||
        (listen && ::listen(socket_fd.get(), 1024) != 0)) {
      last_errno = errno;
      continue;
    }
    sockaddr_storage bound{};
    socklen_t length = sizeof bound;
    if (::getsockname(socket_fd.get(), reinterpret_cast<sockaddr*>(&bound), &length) != 0) {
      last_errno = errno;
      continue;
    }
    ::freeaddrinfo(found);
    const in_port_t port = bound.ss_family == AF_INET6 ? reinterpret_cast<const sockaddr_in6&>(bound).sin6_port
                                                        : reinterpret_cast<const sockaddr_in&>(bound).sin_port;
    return {std::move(socket_fd), ntohs(port)};
  }
  ::freeaddrinfo(found);
  throw std::runtime_error("tokbench launcher: cannot bind a TCP port on --master-addr " + addr + ": " +
                           std::strerror(last_errno));
}

}  // namespace

int find_free_port(const std::string& addr) { return bind_free_port(addr, /*listen=*/false).second; }

LaunchResult launch_ranks(const LaunchOptions& options) {
  validate_launch_options(options);
  check_executable(options.argv.front());
  // --master-port 0 (one node): the launcher binds and listens on a free port itself and hands
  // the listening socket to rank 0, whose store serves on it. A port found free, closed and
  // passed on by number could be taken by another process (another launcher) meanwhile.
  Fd store_socket;
  int port = options.master_port;
  if (port == 0) std::tie(store_socket, port) = bind_free_port(options.master_addr, /*listen=*/true);
  const Fd dev_null = open_dev_null();
  // Handlers before the first rank starts: a Ctrl-C while ranks start is queued in the self-pipe and
  // forwarded by the loop, instead of killing the launcher and orphaning the ranks already up.
  // Destroyed last, after every rank has been reaped.
  SignalScope signals;
  std::vector<RankState> ranks(static_cast<std::size_t>(options.nproc_per_node));
  const ReapOnUnwind reap_on_unwind(ranks);
  for (int local_rank = 0; local_rank < options.nproc_per_node; ++local_rank) {
    const bool store_rank = options.node_rank == 0 && local_rank == 0;
    start_rank(options, local_rank, port, store_rank ? store_socket.get() : -1, dev_null,
               ranks[static_cast<std::size_t>(local_rank)]);
    if (store_rank) store_socket.reset();  // rank 0 holds it now
  }
  return Supervisor(options, signals, ranks).run();
}

}  // namespace tokbench::distributed
