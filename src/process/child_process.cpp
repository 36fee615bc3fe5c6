// child_process.hpp: posix_spawn with its attributes and file actions, pidfd waits, bounded capture.
#include "process/child_process.hpp"
#include "process/unique_fd.hpp"

#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <utility>

extern char** environ;

namespace tokbench::process {
namespace {

// Longest single wait: a deadline of time_point::max() must not overflow a timespec.
constexpr std::chrono::seconds kLongestWait{3600};
// Without a pidfd (kernels before 5.3) the end of a child is noticed by polling this often.
constexpr std::chrono::milliseconds kPollWithoutPidfd{20};
// run_captured: after SIGTERM, how long a timed-out command gets before SIGKILL.
constexpr std::chrono::seconds kTermToKill{5};

[[noreturn]] void fail(const std::string& what, int error) {
  throw std::runtime_error(what + ": " + std::strerror(error));
}

// Undoes posix_spawn's attribute and file-action objects on every path out.
struct SpawnObjects {
  posix_spawnattr_t attributes;
  posix_spawn_file_actions_t actions;
  SpawnObjects() {
    if (const int e = posix_spawnattr_init(&attributes); e != 0) fail("posix_spawnattr_init", e);
    if (const int e = posix_spawn_file_actions_init(&actions); e != 0) {
      posix_spawnattr_destroy(&attributes);
      fail("posix_spawn_file_actions_init", e);
    }
  }
  ~SpawnObjects() {
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attributes);
  }
  SpawnObjects(const SpawnObjects&) = delete;
  SpawnObjects& operator=(const SpawnObjects&) = delete;
};

void check(int error, const char* what) {
  if (error != 0) fail(what, error);
}

// The file actions run in order in the child. A source descriptor that is itself one of the
// targets of an earlier dup2 (0..2, or kInheritedFd) would be overwritten before it is copied,
// so such a source is first duplicated above them in this process, for the spawn's duration.
int above(int fd, int floor, std::vector<Fd>& temporaries) {
  if (fd < 0 || fd > floor) return fd;
  const int moved = ::fcntl(fd, F_DUPFD_CLOEXEC, floor + 1);
  if (moved < 0) fail("fcntl(F_DUPFD_CLOEXEC)", errno);
  temporaries.emplace_back(moved);
  return moved;
}

std::vector<std::string> child_environment(const SpawnSpec& spec) {
  std::vector<std::string> env;
  if (spec.environment) {
    env = *spec.environment;
  } else {
    for (char** e = environ; e != nullptr && *e != nullptr; ++e) env.emplace_back(*e);
  }
  // The request is for this child only: never pass on one addressed to another process.
  const std::string key = std::string(kParentPidEnv) + "=";
  std::erase_if(env, [&](const std::string& entry) { return entry.rfind(key, 0) == 0; });
  if (spec.die_with_parent) env.push_back(key + std::to_string(::getpid()));
  return env;
}

std::vector<char*> c_strings(std::vector<std::string>& strings) {
  std::vector<char*> out;
  out.reserve(strings.size() + 1);
  for (auto& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

int open_pidfd(pid_t pid) {
#ifdef SYS_pidfd_open
  const long fd = ::syscall(SYS_pidfd_open, pid, 0);
  if (fd >= 0) {
    ::fcntl(static_cast<int>(fd), F_SETFD, FD_CLOEXEC);  // pidfd_open sets it; be explicit
    return static_cast<int>(fd);
  }
#endif
  return -1;
}

timespec to_timespec(std::chrono::nanoseconds d) {
  if (d < std::chrono::nanoseconds::zero()) d = std::chrono::nanoseconds::zero();
  timespec ts{};
  ts.tv_sec = static_cast<time_t>(d.count() / 1000000000);
  ts.tv_nsec = static_cast<long>(d.count() % 1000000000);
  return ts;
}

}  // namespace

const char* signal_name(int signal_number) {
  switch (signal_number) {
    case SIGHUP: return "SIGHUP";
    case SIGINT: return "SIGINT";
    case SIGQUIT: return "SIGQUIT";
    case SIGILL: return "SIGILL";
    case SIGTRAP: return "SIGTRAP";
    case SIGABRT: return "SIGABRT";
    case SIGBUS: return "SIGBUS";
    case SIGFPE: return "SIGFPE";
    case SIGKILL: return "SIGKILL";
    case SIGUSR1: return "SIGUSR1";
    case SIGSEGV: return "SIGSEGV";
    case SIGUSR2: return "SIGUSR2";
    case SIGPIPE: return "SIGPIPE";
    case SIGALRM: return "SIGALRM";
    case SIGTERM: return "SIGTERM";
    case SIGCHLD: return "SIGCHLD";
    case SIGCONT: return "SIGCONT";
    case SIGSTOP: return "SIGSTOP";
    case SIGTSTP: return "SIGTSTP";
    case SIGTTIN: return "SIGTTIN";
    case SIGTTOU: return "SIGTTOU";
    case SIGXCPU: return "SIGXCPU";
    case SIGXFSZ: return "SIGXFSZ";
    case SIGSYS: return "SIGSYS";
    default: return "unknown signal";
  }
}

std::string ExitStatus::describe() const {
  if (signal != 0) return "was killed by signal " + std::to_string(signal) + " (" + signal_name(signal) + ")";
  return "exited with code " + std::to_string(exit_code);
}

ExitStatus exit_status_from_wait(int wait_status) {
  ExitStatus s;
  if (WIFSIGNALED(wait_status)) {
    s.signal = WTERMSIG(wait_status);
  } else if (WIFEXITED(wait_status)) {
    s.exit_code = WEXITSTATUS(wait_status);
  } else {
    s.exit_code = 1;
  }
  return s;
}

pid_t spawn(const SpawnSpec& spec) {
  if (spec.argv.empty() || spec.argv.front().empty()) throw std::invalid_argument("spawn: no program to run");
  SpawnObjects objects;
  short flags = POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF;
  if (spec.own_process_group) {
    flags |= POSIX_SPAWN_SETPGROUP;
    check(posix_spawnattr_setpgroup(&objects.attributes, 0), "posix_spawnattr_setpgroup");
  }
  sigset_t empty, defaults;
  sigemptyset(&empty);
  sigemptyset(&defaults);
  for (int s : spec.default_signals) sigaddset(&defaults, s);
  check(posix_spawnattr_setsigmask(&objects.attributes, &empty), "posix_spawnattr_setsigmask");
  check(posix_spawnattr_setsigdefault(&objects.attributes, &defaults), "posix_spawnattr_setsigdefault");
  check(posix_spawnattr_setflags(&objects.attributes, flags), "posix_spawnattr_setflags");

  std::vector<Fd> temporaries;
  const int sources[3] = {above(spec.stdin_fd, STDERR_FILENO, temporaries),
                          above(spec.stdout_fd, STDERR_FILENO, temporaries),
                          above(spec.stderr_fd, STDERR_FILENO, temporaries)};
  const int inherited = above(spec.inherited_fd, kInheritedFd, temporaries);
  for (int target = 0; target < 3; ++target)
    if (sources[target] >= 0)
      check(posix_spawn_file_actions_adddup2(&objects.actions, sources[target], target), "posix_spawn_file_actions_adddup2");
  // dup2 onto another number clears close-on-exec on the copy: the child keeps exactly this one.
  if (inherited >= 0)
    check(posix_spawn_file_actions_adddup2(&objects.actions, inherited, kInheritedFd), "posix_spawn_file_actions_adddup2");

  std::vector<std::string> argv_strings = spec.argv;
  std::vector<std::string> env_strings = child_environment(spec);
  std::vector<char*> argv = c_strings(argv_strings);
  std::vector<char*> envp = c_strings(env_strings);
  pid_t pid = -1;
  const bool search = spec.argv.front().find('/') == std::string::npos;
  const int error = search ? posix_spawnp(&pid, argv[0], &objects.actions, &objects.attributes, argv.data(), envp.data())
                           : posix_spawn(&pid, argv[0], &objects.actions, &objects.attributes, argv.data(), envp.data());
  if (error != 0) fail("cannot execute " + spec.argv.front(), error);
  return pid;
}

Child::Child(const SpawnSpec& spec) : own_group_(spec.own_process_group) {
  pid_ = spawn(spec);
  pidfd_ = open_pidfd(pid_);
}

Child::Child(Child&& other) noexcept
    : pid_(std::exchange(other.pid_, -1)),
      pidfd_(std::exchange(other.pidfd_, -1)),
      own_group_(other.own_group_),
      status_(std::move(other.status_)) {}

Child::~Child() {
  if (pid_ > 0 && !status_) {
    signal_group(SIGKILL);
    ::kill(pid_, SIGKILL);
    (void)wait();
  }
  if (pidfd_ >= 0) ::close(pidfd_);
}

void Child::signal_group(int signal_number) const {
  if (pid_ <= 0 || status_) return;
  // A child that left our group for one of its own (setsid) is reached by its pid.
  if (!own_group_ || ::kill(-pid_, signal_number) != 0) ::kill(pid_, signal_number);
}

std::optional<ExitStatus> Child::try_wait() {
  if (status_ || pid_ <= 0) return status_;
  int wait_status = 0;
  pid_t done = 0;
  do done = ::waitpid(pid_, &wait_status, WNOHANG);
  while (done < 0 && errno == EINTR);
  if (done == 0) return std::nullopt;
  // ECHILD: reaped elsewhere (a waitpid(-1) in another thread); its status is lost: a failure.
  status_ = done < 0 ? ExitStatus{1, 0} : exit_status_from_wait(wait_status);
  return status_;
}

ExitStatus Child::wait() {
  if (status_ || pid_ <= 0) return status_.value_or(ExitStatus{});
  int wait_status = 0;
  pid_t done = 0;
  do done = ::waitpid(pid_, &wait_status, 0);
  while (done < 0 && errno == EINTR);
  status_ = done < 0 ? ExitStatus{1, 0} : exit_status_from_wait(wait_status);
  return *status_;
}

std::optional<ExitStatus> Child::wait_until(Clock::time_point deadline, const std::function<bool()>& stop_requested,
                                            const std::vector<int>& wake_signals) {
  sigset_t wake, before, during;
  sigemptyset(&wake);
  for (int s : wake_signals) sigaddset(&wake, s);
  pthread_sigmask(SIG_BLOCK, &wake, &before);
  during = before;
  for (int s : wake_signals) sigdelset(&during, s);
  std::optional<ExitStatus> ended;
  while (true) {
    if ((ended = try_wait())) break;
    if (stop_requested && stop_requested()) break;
    const auto now = Clock::now();
    if (now >= deadline) break;
    auto wait = deadline - now;
    if (wait > kLongestWait) wait = kLongestWait;
    if (pidfd_ < 0 && wait > kPollWithoutPidfd) wait = kPollWithoutPidfd;
    const timespec timeout = to_timespec(std::chrono::duration_cast<std::chrono::nanoseconds>(wait));
    pollfd p{pidfd_, POLLIN, 0};
    // Returns when the child ends (the pidfd turns readable), at the timeout, or on a signal
    // (EINTR); the loop then looks again.
    ::ppoll(pidfd_ >= 0 ? &p : nullptr, pidfd_ >= 0 ? 1 : 0, &timeout, &during);
  }
  pthread_sigmask(SIG_SETMASK, &before, nullptr);
  return ended;
}

CapturedRun run_captured(const std::vector<std::string>& argv, std::size_t max_output_bytes,
                         std::chrono::duration<double> timeout) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) fail("pipe", errno);
  Fd read_end(fds[0]), write_end(fds[1]);
  Fd null(::open("/dev/null", O_RDONLY | O_CLOEXEC));
  SpawnSpec spec;
  spec.argv = argv;
  spec.stdin_fd = null.get();
  spec.stdout_fd = write_end.get();
  spec.stderr_fd = write_end.get();
  spec.die_with_parent = false;
  Child child(spec);
  write_end.reset();  // EOF on the read end once the command and its children close theirs

  CapturedRun run;
  auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(timeout);
  bool terminated = false;
  char buffer[8192];
  while (read_end.is_open()) {
    const auto now = Clock::now();
    if (now >= deadline) {
      if (terminated) break;  // SIGKILL below; stop reading a pipe its children may hold
      run.timed_out = true;
      child.signal_group(SIGTERM);
      terminated = true;
      deadline = now + kTermToKill;
      continue;
    }
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now).count();
    pollfd p{read_end.get(), POLLIN, 0};
    const int ready = ::poll(&p, 1, static_cast<int>(std::min<long long>(left + 1, 1000)));
    if (ready <= 0) continue;  // timeout or EINTR: look at the deadline again
    const ssize_t n = ::read(read_end.get(), buffer, sizeof buffer);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n <= 0) {
      read_end.reset();
      break;
    }
    const std::size_t room = max_output_bytes - std::min(max_output_bytes, run.output.size());
    run.output.append(buffer, std::min(room, static_cast<std::size_t>(n)));
    if (static_cast<std::size_t>(n) > room) run.truncated = true;
  }
  if (auto status = child.wait_until(deadline)) {
    run.status = *status;
  } else {
    if (!terminated) {
      run.timed_out = true;
      child.signal_group(SIGTERM);
      if (auto late = child.wait_until(Clock::now() + kTermToKill)) {
        run.status = *late;
        return run;
      }
    }
    child.signal_group(SIGKILL);
    run.status = child.wait();
  }
  return run;
}

void honour_parent_death_request() {
  const char* text = std::getenv(kParentPidEnv);
  if (text == nullptr) return;
  const long parent = std::strtol(text, nullptr, 10);
  ::unsetenv(kParentPidEnv);  // addressed to this process, not to the ones it starts
  if (parent <= 0) return;
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  // The parent died between the spawn and the line above: the signal will never come.
  if (::getppid() != static_cast<pid_t>(parent)) ::_exit(127);
}

}  // namespace tokbench::process
