// Watches a group of started children that only make sense together (a job's ranks) until every
// one has ended, been reaped and had its output relayed: one poll() loop over their LineRelays and
// a SignalScope's self-pipe. The first child that fails on its own starts a grace, then the others
// get SIGTERM and, 5 s later, SIGKILL; the first SIGINT/SIGTERM is forwarded to every child and a
// second kills them. Children are signalled by process group. Torch-free: POSIX and the standard library.
#pragma once

#include "process/child_process.hpp"
#include "process/line_relay.hpp"
#include "process/signal_scope.hpp"

#include <sys/types.h>

#include <array>
#include <cstddef>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

namespace tokbench::process {

struct SupervisedChild {
  int id = 0;      // named in messages as "<noun> <id>"
  pid_t pid = -1;  // started in a process group of its own
  Clock::time_point start;
  std::array<LineRelay, 2> output;  // stdout, stderr; ones not open are skipped

  // Filled in by the supervisor.
  bool reaped = false;
  ExitStatus status;
  bool ended_by_supervisor = false;  // after another child failed, or by the second stop request
  Clock::time_point end;
};

struct SupervisorOptions {
  // How messages name the children: "rank 1 exited with code 3; ending the other ranks (grace 30 s)".
  std::string noun = "child";
  std::string noun_plural = "children";
  std::FILE* messages = stderr;
  std::string message_prefix;  // starts each of the supervisor's lines, e.g. "tokbench launcher: "
  // After the first child fails, how long the others get to end on their own before SIGTERM.
  double failure_grace_seconds = 30;
  // When the child with id lead_id ends (it reports the group's result), those still running get
  // this long before SIGTERM instead of the whole failure grace; negative: no such rule.
  int lead_id = 0;
  double lead_exit_grace_seconds = -1;
};

struct SupervisionResult {
  // The first child (in time) that exited non-zero or by a signal, not ended by the supervisor.
  std::optional<std::size_t> first_failed;
  std::string failure;  // "rank 1 exited with code 3 after 0.1 s"; empty when none failed
  int stop_requests = 0;
  int first_stop_signal = 0;  // SIGINT or SIGTERM; 0 when none came
};

// `signals` must have a self-pipe that SIGCHLD wakes too (SignalScopeOptions::self_pipe,
// wake_signals {SIGCHLD}), opened before the first child started so that no Ctrl-C is lost.
// Returns once every child is reaped and its pipes are closed.
SupervisionResult supervise(std::vector<SupervisedChild>& children, SignalScope& signals,
                            const SupervisorOptions& options);

// Kills (group and pid) and reaps every child not yet reaped when it goes out of scope: on a path
// that unwinds through an exception (a spawn that failed half-way), no child or zombie is left.
class ReapOnUnwind {
 public:
  explicit ReapOnUnwind(std::vector<SupervisedChild>& children) : children_(children) {}
  ~ReapOnUnwind();
  ReapOnUnwind(const ReapOnUnwind&) = delete;
  ReapOnUnwind& operator=(const ReapOnUnwind&) = delete;

 private:
  std::vector<SupervisedChild>& children_;
};

}  // namespace tokbench::process
