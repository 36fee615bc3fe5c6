// signal_scope.hpp. The handler finds the open scopes in a fixed array of atomic pointers; the
// thread that opens and closes scopes is the only writer, and a closing scope waits until no
// handler is running before its pipe closes, so a handler never writes into a reused descriptor.
#include "process/signal_scope.hpp"

#include <fcntl.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <stdexcept>
#include <system_error>

namespace tokbench::process {
namespace {

// Deep enough for any nesting tokbench does (a test opens three); a fixed array needs no
// allocation and no lock to read from a handler.
constexpr int kMaxDepth = 8;
std::array<std::atomic<SignalScope::State*>, kMaxDepth> g_scopes{};
std::atomic<int> g_depth{0};
std::atomic<int> g_handlers_running{0};
static_assert(std::atomic<int>::is_always_lock_free && std::atomic<bool>::is_always_lock_free &&
                  std::atomic<pid_t>::is_always_lock_free && std::atomic<SignalScope::State*>::is_always_lock_free,
              "the signal handler needs lock-free atomics");

bool is_stop_signal(int signal_number) { return signal_number == SIGINT || signal_number == SIGTERM; }

// Forwarding comes before the scope's own action, which may _exit().
void deliver(SignalScope::State& scope, int signal_number) {
  const bool stop = is_stop_signal(signal_number);
  const auto& wake = scope.wake_signals;
  if (!stop && std::find(wake.begin(), wake.end(), signal_number) == wake.end()) return;  // another scope's
  int count = 0;
  if (stop) {
    count = scope.stop_count.fetch_add(1) + 1;
    int none = 0;
    scope.first_stop_signal.compare_exchange_strong(none, signal_number);
    scope.stop_requested.store(true);
  }
  if (scope.wake_write_fd >= 0) {
    const auto byte = static_cast<unsigned char>(signal_number);
    // A full pipe drops the byte: the loop reading it is awake already and will look again.
    [[maybe_unused]] const ssize_t written = ::write(scope.wake_write_fd, &byte, 1);
  }
  if (!stop) return;
  if (const pid_t target = scope.forward_pid.load(); target != 0) ::kill(target, count == 1 ? SIGINT : SIGKILL);
  if (scope.on_stop != nullptr) scope.on_stop(count);
}

extern "C" void on_signal(int signal_number) {
  g_handlers_running.fetch_add(1);
  const int saved_errno = errno;  // the interrupted code may be about to read errno
  for (int i = g_depth.load() - 1; i >= 0; --i) {
    if (SignalScope::State* scope = g_scopes[static_cast<std::size_t>(i)].load()) deliver(*scope, signal_number);
  }
  errno = saved_errno;
  g_handlers_running.fetch_sub(1);
}

[[noreturn]] void throw_errno(const char* what) {
  throw std::system_error(errno, std::generic_category(), std::string("tokbench: ") + what);
}

}  // namespace

SignalScope::SignalScope(SignalScopeOptions options) {
  state_.wake_signals = std::move(options.wake_signals);
  state_.on_stop = options.on_stop;
  if (options.self_pipe) {
    int fds[2];
    // Non-blocking both ends: a handler must never block, even when nobody drains the pipe.
    if (::pipe2(fds, O_CLOEXEC | O_NONBLOCK) != 0) throw_errno("pipe");
    read_fd_ = fds[0];
    write_fd_ = fds[1];
    state_.wake_write_fd = write_fd_;
  }
  const int depth = g_depth.load();
  if (depth == kMaxDepth) {
    uninstall();
    throw std::logic_error("tokbench: more than 8 nested signal scopes");
  }
  slot_ = depth;
  g_scopes[static_cast<std::size_t>(slot_)].store(&state_);
  g_depth.store(depth + 1);
  std::vector<int> signals{SIGINT, SIGTERM};
  signals.insert(signals.end(), state_.wake_signals.begin(), state_.wake_signals.end());
  install(signals, options.restart_interrupted_calls);
}

SignalScope::~SignalScope() { uninstall(); }

void SignalScope::install(const std::vector<int>& signals, bool restart) {
  struct sigaction action {};
  action.sa_handler = on_signal;
  // One signal at a time per thread: a second Ctrl-C cannot interleave with the first's action.
  sigemptyset(&action.sa_mask);
  for (const int signal_number : signals) sigaddset(&action.sa_mask, signal_number);
  // SA_NOCLDSTOP: a child that stops or continues is not an event anyone here acts on.
  action.sa_flags = SA_NOCLDSTOP | (restart ? SA_RESTART : 0);
  for (const int signal_number : signals) {
    struct sigaction previous {};
    if (::sigaction(signal_number, &action, &previous) != 0) {
      const int saved_errno = errno;
      uninstall();
      errno = saved_errno;
      throw_errno("sigaction");
    }
    replaced_.emplace_back(signal_number, previous);
  }
}

void SignalScope::uninstall() {
  for (auto it = replaced_.rbegin(); it != replaced_.rend(); ++it) ::sigaction(it->first, &it->second, nullptr);
  replaced_.clear();
  if (slot_ >= 0) {
    g_scopes[static_cast<std::size_t>(slot_)].store(nullptr);
    if (g_depth.load() == slot_ + 1) g_depth.store(slot_);
    slot_ = -1;
  }
  // Order matters: with the handlers gone and the slot cleared, wait out any handler that read
  // the slot before the clear; only then may the pipe close and the state go.
  while (g_handlers_running.load() != 0) ::sched_yield();
  if (read_fd_ >= 0) ::close(read_fd_);
  if (write_fd_ >= 0) ::close(write_fd_);
  read_fd_ = write_fd_ = -1;
}

std::vector<int> SignalScope::take_signals() {
  std::vector<int> signals;
  if (read_fd_ < 0) return signals;
  unsigned char bytes[64];
  for (;;) {
    const ssize_t n = ::read(read_fd_, bytes, sizeof bytes);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // EAGAIN: drained
    signals.insert(signals.end(), bytes, bytes + n);
  }
  return signals;
}

void SignalScope::forward_to(pid_t pid) {
  state_.forward_pid.store(pid);
  // A request that came between the child's start and this call would otherwise never reach it.
  if (pid != 0 && stop_count() > 0) ::kill(pid, SIGINT);
}

}  // namespace tokbench::process
