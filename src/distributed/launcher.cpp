// Rank launcher: N ranks started through process::spawn (posix_spawn: no code of ours runs
// between fork and exec) with torchrun's environment, then watched by process::supervise (the
// poll() loop over their pipes and the signal self-pipe, the failure escalation). What is
// rank-specific stays here: the environment, the prefixes, validation and the exit code.
#include "distributed/launcher.hpp"

#include "process/child_process.hpp"
#include "process/signal_scope.hpp"
#include "process/supervisor.hpp"
#include "process/unique_fd.hpp"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <unistd.h>

#include <algorithm>
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

// Shortest round text for a duration in seconds: "30", "1.5", "0.25".
std::string format_seconds(double seconds) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", seconds);
  return text;
}

// One launch at a time per process: ranks are reaped by pid, and two launches would each
// forward the other's Ctrl-C.
std::atomic<bool> g_launch_running{false};

class OneLaunchAtATime {
 public:
  OneLaunchAtATime() {
    if (g_launch_running.exchange(true)) {
      throw std::logic_error("tokbench launcher: launch_ranks is already running in this process");
    }
  }
  ~OneLaunchAtATime() { g_launch_running.store(false); }
  OneLaunchAtATime(const OneLaunchAtATime&) = delete;
  OneLaunchAtATime& operator=(const OneLaunchAtATime&) = delete;
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
// signal the launcher handles (SpawnSpec's default_signals) and an empty signal mask.
pid_t spawn_rank(const LaunchOptions& options, int local_rank, int port, int store_listen_fd, const Fd& dev_null,
                 const Pipe& out, const Pipe& err) {
  process::SpawnSpec spec;
  spec.argv = options.argv;
  spec.environment = rank_environment(options, local_rank, port, store_listen_fd >= 0);
  spec.stdin_fd = dev_null.get();
  spec.stdout_fd = out.write.get();
  spec.stderr_fd = err.write.get();
  spec.inherited_fd = store_listen_fd;
  try {
    return process::spawn(spec);
  } catch (const std::runtime_error& e) {
    throw std::runtime_error(std::string("tokbench launcher: ") + e.what());
  }
}

// Fails early, with the reason, instead of N ranks each exiting 127.
void check_executable(const std::string& path) {
  if (::access(path.c_str(), X_OK) != 0) throw_errno("cannot execute " + path);
}

// Starts local rank `local_rank` with its pipes and environment and fills in its entry.
void start_rank(const LaunchOptions& options, int local_rank, int port, int store_listen_fd, const Fd& dev_null,
                process::SupervisedChild& rank) {
  Pipe out = make_pipe();
  Pipe err = make_pipe();
  set_nonblocking(out.read);
  set_nonblocking(err.read);
  rank.id = options.node_rank * options.nproc_per_node + local_rank;
  rank.start = process::Clock::now();
  rank.pid = spawn_rank(options, local_rank, port, store_listen_fd, dev_null, out, err);
  // The parent's copies of the write ends close here (Pipe destructors), so EOF on a read end
  // means the rank and everything it started have closed theirs.
  const bool pass_through = !options.prefix_output || (rank.id == 0);
  const std::string prefix = options.prefix_output ? "[rank " + std::to_string(rank.id) + "] " : "";
  rank.output[0] = process::LineRelay(std::move(out.read), options.out, pass_through ? "" : prefix);
  rank.output[1] = process::LineRelay(std::move(err.read), options.err, prefix);
}

RankExit rank_exit_of(const process::SupervisedChild& rank) {
  RankExit exit;
  exit.rank = rank.id;
  exit.exit_code = rank.status.exit_code;
  exit.signal = rank.status.signal;
  exit.killed_by_launcher = rank.ended_by_supervisor;
  exit.seconds = std::chrono::duration<double>(rank.end - rank.start).count();
  return exit;
}

bool ended_badly(const RankExit& exit) { return exit.signal != 0 || exit.exit_code != 0; }

LaunchResult launch_result_of(const std::vector<process::SupervisedChild>& ranks,
                              const process::SupervisionResult& supervision) {
  LaunchResult result;
  for (const process::SupervisedChild& rank : ranks) result.ranks.push_back(rank_exit_of(rank));
  result.failure = supervision.failure;
  result.interrupted = supervision.stop_requests > 0;
  if (supervision.first_failed) {
    const RankExit& failed = result.ranks[*supervision.first_failed];
    result.first_failed_rank = failed.rank;
    // A signal death reads as 128 + the signal, as in a shell.
    result.exit_code = process::ExitStatus{failed.exit_code, failed.signal}.shell_status();
  } else if (result.interrupted) {
    // Every rank ended cleanly or was killed by the second signal: the run was still cut short.
    const bool all_clean = std::none_of(result.ranks.begin(), result.ranks.end(), ended_badly);
    result.exit_code = all_clean ? 0 : 128 + supervision.first_stop_signal;
  }
  return result;
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
  const OneLaunchAtATime one_launch;
  // --master-port 0 (one node): the launcher binds and listens on a free port itself and hands
  // the listening socket to rank 0, whose store serves on it. A port found free, closed and
  // passed on by number could be taken by another process (another launcher) meanwhile.
  Fd store_socket;
  int port = options.master_port;
  if (port == 0) std::tie(store_socket, port) = bind_free_port(options.master_addr, /*listen=*/true);
  const Fd dev_null = open_dev_null();
  // Handlers before the first rank starts: a Ctrl-C while ranks start is queued in the self-pipe and
  // forwarded by the supervisor, instead of killing the launcher and orphaning the ranks already up.
  // Destroyed last, after every rank has been reaped. SA_RESTART spares other threads' system
  // calls the EINTR; the supervisor's poll() is woken regardless.
  process::SignalScope signals(
      process::SignalScopeOptions{.self_pipe = true, .wake_signals = {SIGCHLD}, .restart_interrupted_calls = true});
  std::vector<process::SupervisedChild> ranks(static_cast<std::size_t>(options.nproc_per_node));
  const process::ReapOnUnwind reap_on_unwind(ranks);
  for (int local_rank = 0; local_rank < options.nproc_per_node; ++local_rank) {
    const bool store_rank = options.node_rank == 0 && local_rank == 0;
    start_rank(options, local_rank, port, store_rank ? store_socket.get() : -1, dev_null,
               ranks[static_cast<std::size_t>(local_rank)]);
    if (store_rank) store_socket.reset();  // rank 0 holds it now
  }
  process::SupervisorOptions supervision;
  supervision.noun = "rank";
  supervision.noun_plural = "ranks";
  supervision.messages = options.err;
  supervision.message_prefix = "tokbench launcher: ";
  supervision.failure_grace_seconds = options.failure_grace_seconds;
  supervision.lead_id = 0;
  supervision.lead_exit_grace_seconds = options.lead_exit_grace_seconds;
  return launch_result_of(ranks, process::supervise(ranks, signals, supervision));
}

}  // namespace tokbench::distributed
