// Starting and ending child processes: the one way tokbench runs another program (the rank
// launcher, the sweep's runs, the Python executors, Slurm's commands). An argv goes in, never a
// shell command line; the child is started with posix_spawn (no fork of a large parent, no code
// of ours between fork and exec), optionally in its own process group so that it and whatever it
// starts can be signalled together, and its end is waited for on a pidfd (woken by the child's
// exit or by a signal, not by polling).
//
// posix_spawn cannot give a child a parent-death signal. A child asked to die with its parent
// (SpawnSpec::die_with_parent) finds this process's pid in TOKBENCH_PARENT_PID and sets the
// signal itself as its first act (honour_parent_death_request(); the Python step script does the
// same with ctypes). Only tokbench's own programs read it; other children (sbatch, scontrol) are
// short-lived and waited for with a timeout instead.
//
// Torch-free: POSIX and the standard library only.
#pragma once

#include <signal.h>
#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace tokbench::process {

inline constexpr const char* kParentPidEnv = "TOKBENCH_PARENT_PID";
// The descriptor number under which SpawnSpec::inherited_fd reaches the child.
inline constexpr int kInheritedFd = 3;

using Clock = std::chrono::steady_clock;

// How a child ended.
struct ExitStatus {
  int exit_code = 0;  // when it exited
  int signal = 0;     // non-zero when a signal ended it
  bool succeeded() const { return signal == 0 && exit_code == 0; }
  // A shell's $? for it: the exit code, or 128 + the signal.
  int shell_status() const { return signal != 0 ? 128 + signal : exit_code; }
  // "exited with code 3" or "was killed by signal 9 (SIGKILL)".
  std::string describe() const;
};

ExitStatus exit_status_from_wait(int wait_status);
const char* signal_name(int signal_number);  // "SIGKILL"; "unknown signal" when not a common one

struct SpawnSpec {
  std::vector<std::string> argv;  // argv[0]: a path, or a bare name looked up on PATH
  // The child's whole environment as "KEY=VALUE"; unset: this process's.
  std::optional<std::vector<std::string>> environment;
  // Descriptors that become the child's stdin, stdout and stderr; -1 inherits this process's.
  int stdin_fd = -1;
  int stdout_fd = -1;
  int stderr_fd = -1;
  // A descriptor the child keeps, as kInheritedFd (every other descriptor of ours that is
  // close-on-exec stays closed to it); -1: none.
  int inherited_fd = -1;
  // Its own process group (pgid = its pid): a terminal's Ctrl-C then reaches only this process,
  // which decides what to forward, and signal_group() reaches the child's own children too.
  bool own_process_group = true;
  bool die_with_parent = true;  // see the file comment
  // Signals whose disposition the child gets as SIG_DFL (a handler of ours never runs in it
  // either way; this also undoes an inherited SIG_IGN). Its signal mask is empty.
  std::vector<int> default_signals{SIGINT, SIGTERM, SIGCHLD, SIGPIPE};
};

// Starts a child; returns its pid. Throws std::runtime_error with one line when it cannot be
// started ("cannot execute PATH: Exec format error"): posix_spawn reports exec failures to the
// caller, so no child is left to reap then.
pid_t spawn(const SpawnSpec& spec);

// A started child that is always reaped: the destructor of a child still running kills it (its
// group too when it has one) and waits for it, so no path out of a caller leaves a zombie or an
// orphan behind.
class Child {
 public:
  explicit Child(const SpawnSpec& spec);
  ~Child();
  Child(Child&& other) noexcept;
  Child& operator=(Child&&) = delete;
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;

  pid_t pid() const { return pid_; }
  bool ended() const { return status_.has_value(); }
  // Signals the child's process group when it has one (else the child); nothing once it ended.
  void signal_group(int signal_number) const;
  // Reaps it if it has ended; never blocks.
  std::optional<ExitStatus> try_wait();
  // Blocks until it ends.
  ExitStatus wait();
  // Waits until the child ends (its status), `deadline` passes, or `stop_requested` turns true
  // (nullopt for both). A signal in `wake_signals` (e.g. SIGINT, SIGTERM, whose handlers set
  // what stop_requested reads) wakes the wait at once: they are blocked while stop_requested is
  // read and unblocked only inside the wait itself, so none can slip in between.
  std::optional<ExitStatus> wait_until(Clock::time_point deadline, const std::function<bool()>& stop_requested = {},
                                       const std::vector<int>& wake_signals = {});

 private:
  pid_t pid_ = -1;
  int pidfd_ = -1;  // -1 where the kernel has no pidfd_open: wait_until then polls every 20 ms
  bool own_group_ = true;
  std::optional<ExitStatus> status_;
};

// Runs argv to its end with stdout and stderr captured together (stdin /dev/null): for short
// commands whose output is parsed (Slurm's). Output beyond max_output_bytes is read and dropped
// (`truncated`), so a chatty command neither blocks on a full pipe nor grows memory; a command
// still running after timeout gets SIGTERM, then SIGKILL 5 s later (`timed_out`). A signal that
// interrupts the reads does not end the wait.
struct CapturedRun {
  ExitStatus status;
  std::string output;
  bool truncated = false;
  bool timed_out = false;
};
CapturedRun run_captured(const std::vector<std::string>& argv, std::size_t max_output_bytes = 1 << 20,
                         std::chrono::duration<double> timeout = std::chrono::seconds(120));

// For a program started with die_with_parent: sets SIGKILL as its parent-death signal when
// TOKBENCH_PARENT_PID is set, and exits at once (status 127) when that parent is already gone.
// Call it first thing in main(), before any thread starts.
void honour_parent_death_request();

}  // namespace tokbench::process
