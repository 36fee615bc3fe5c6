// The one place tokbench catches SIGINT and SIGTERM. While a SignalScope lives they are caught
// by one handler that only touches lock-free atomics, write() to a non-blocking self-pipe, kill()
// and the scope's own action (which must be async-signal-safe too); when it closes, the handlers
// in force before are back. Scopes nest, opened and closed in LIFO order by one thread: a signal
// reaches every open scope, innermost first. Torch-free: POSIX and the standard library.
#pragma once

#include <signal.h>
#include <sys/types.h>

#include <atomic>
#include <utility>
#include <vector>

namespace tokbench::process {

struct SignalScopeOptions {
  // A non-blocking pipe written with the signal's number on every signal the scope catches, for
  // an event loop that poll()s (wake_fd()); without it a stop is only counted.
  bool self_pipe = false;
  // Signals that only wake the self-pipe (the launcher's SIGCHLD); they are not stop requests.
  std::vector<int> wake_signals = {};
  // SA_RESTART: other threads' blocking calls continue instead of failing with EINTR.
  bool restart_interrupted_calls = false;
  // Runs inside the handler on every stop request, after it is counted (`count` is 1 for the
  // first). It must be async-signal-safe; it may _exit().
  void (*on_stop)(int count) = nullptr;
};

class SignalScope {
 public:
  explicit SignalScope(SignalScopeOptions options = {});
  ~SignalScope();
  SignalScope(const SignalScope&) = delete;
  SignalScope& operator=(const SignalScope&) = delete;

  // SIGINT/SIGTERM received since the scope opened.
  int stop_count() const { return state_.stop_count.load(); }
  // The first of them (SIGINT or SIGTERM), or 0.
  int first_stop_signal() const { return state_.first_stop_signal.load(); }
  // True from the first stop request on, for loops that poll a flag between steps.
  const std::atomic<bool>& stop_requested() const { return state_.stop_requested; }

  // The self-pipe's read end to poll() for POLLIN; -1 without SignalScopeOptions::self_pipe.
  int wake_fd() const { return read_fd_; }
  // The signals written to the self-pipe since the last call, in arrival order.
  std::vector<int> take_signals();

  // From now on stop requests are forwarded to `pid` (a negative pid: that process group): the
  // first as SIGINT, every later one as SIGKILL. A stop that came before the pid was known is
  // forwarded now, as SIGINT. 0 stops forwarding.
  void forward_to(pid_t pid);

  // What the handler reads; public only so that the handler (a free function) can reach it.
  struct State {
    std::atomic<int> stop_count{0};
    std::atomic<int> first_stop_signal{0};
    std::atomic<bool> stop_requested{false};
    std::atomic<pid_t> forward_pid{0};
    int wake_write_fd = -1;
    std::vector<int> wake_signals = {};
    void (*on_stop)(int count) = nullptr;
  };

 private:
  void install(const std::vector<int>& signals, bool restart);
  void uninstall();

  State state_;
  int read_fd_ = -1;
  int write_fd_ = -1;
  int slot_ = -1;
  std::vector<std::pair<int, struct sigaction>> replaced_;  // each signal and the disposition it had
};

}  // namespace tokbench::process
