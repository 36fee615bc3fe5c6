// supervisor.hpp. The escalation after a failure mirrors torchrun's: a grace for the survivors to
// notice on their own, then SIGTERM so that they can flush logs and release GPU memory, then SIGKILL.
#include "process/supervisor.hpp"

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <system_error>

namespace tokbench::process {
namespace {

// After the grace, SIGTERM gets this long to end a child before SIGKILL.
constexpr std::chrono::seconds kSigtermBeforeSigkill{5};
// A child that leaves background processes behind can end while they still hold its pipes open.
// Their output gets this long after the child was reaped; then the supervisor stops reading, so
// it never waits on a pipe that no child owns any more.
constexpr std::chrono::seconds kOrphanDrain{2};
// Longest poll() wait. SIGCHLD wakes the loop when a child ends; this bound only matters when a
// wake-up was lost (a full self-pipe, or another thread replaced the SIGCHLD handler).
constexpr int kMaxPollMs = 250;
// Reading a just-reaped child's pipes to their end is bounded: background processes it left
// behind could keep writing forever.
constexpr int kMaxDrainChunks = 64;

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

Clock::duration seconds_as_duration(double seconds) {
  return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
}

enum class Escalation { none, grace, terminating, killed };

class Supervisor {
 public:
  Supervisor(std::vector<SupervisedChild>& children, SignalScope& signals, const SupervisorOptions& options)
      : children_(children), signals_(signals), options_(options) {}

  SupervisionResult run() {
    while (!finished()) {
      wait_and_relay();
      handle_signals();
      reap_ended_children();
      advance_escalation();
      stop_reading_orphaned_pipes();
    }
    return result_;
  }

 private:
  std::string name(const SupervisedChild& child) const { return options_.noun + " " + std::to_string(child.id); }

  // One message: a whole line, flushed at once, so it cannot land inside a child's relayed line.
  void message(const std::string& text) const {
    const std::string line = options_.message_prefix + text + "\n";
    std::fwrite(line.data(), 1, line.size(), options_.messages);
    std::fflush(options_.messages);
  }

  bool finished() const {
    return std::all_of(children_.begin(), children_.end(), [](const SupervisedChild& child) {
      return child.reaped && !child.output[0].is_open() && !child.output[1].is_open();
    });
  }

  bool others_running() const {
    return std::any_of(children_.begin(), children_.end(), [](const SupervisedChild& c) { return !c.reaped; });
  }

  // Blocks in poll() until output, a signal (SIGCHLD included) or the next deadline, and relays
  // one chunk from every readable pipe (one each: a chatty child cannot starve the others).
  void wait_and_relay() {
    std::vector<pollfd> fds;
    std::vector<LineRelay*> relays;
    fds.push_back({signals_.wake_fd(), POLLIN, 0});
    for (SupervisedChild& child : children_) {
      for (LineRelay& relay : child.output) {
        if (!relay.is_open()) continue;
        fds.push_back({relay.fd(), POLLIN, 0});
        relays.push_back(&relay);
      }
    }
    const int ready = ::poll(fds.data(), fds.size(), poll_timeout_ms());
    if (ready < 0) {
      if (errno == EINTR) return;
      throw std::system_error(errno, std::generic_category(), options_.message_prefix + "poll");
    }
    for (std::size_t i = 0; i < relays.size(); ++i) {
      // POLLHUP without POLLIN is the writer gone with nothing left: read() then returns 0.
      if ((fds[i + 1].revents & (POLLIN | POLLHUP | POLLERR | POLLNVAL)) == 0) continue;
      relays[i]->relay_available();
    }
  }

  // Time until the nearest deadline (escalation step or orphan drain), bounded by kMaxPollMs.
  int poll_timeout_ms() const {
    Clock::time_point next = Clock::now() + std::chrono::milliseconds(kMaxPollMs);
    if (escalation_ == Escalation::grace || escalation_ == Escalation::terminating) {
      next = std::min(next, escalation_deadline_);
    }
    for (const SupervisedChild& child : children_) {
      if (child.reaped && (child.output[0].is_open() || child.output[1].is_open())) {
        next = std::min(next, child.end + kOrphanDrain);
      }
    }
    const auto wait = std::chrono::ceil<std::chrono::milliseconds>(next - Clock::now());
    return static_cast<int>(std::max<std::chrono::milliseconds::rep>(0, wait.count()));
  }

  // The first SIGINT/SIGTERM is forwarded to every child (tokbench ranks then stop at the end of
  // their iteration and report); a second kills them, as a second Ctrl-C kills a single tokbench
  // run. SIGCHLD only woke the loop; reaping follows.
  void handle_signals() {
    for (const int signal_number : signals_.take_signals()) {
      if (signal_number != SIGINT && signal_number != SIGTERM) continue;
      ++result_.stop_requests;
      if (result_.stop_requests == 1) {
        result_.first_stop_signal = signal_number;
        message(std::string("got ") + signal_name(signal_number) + "; forwarding it to the " + options_.noun_plural +
                " (a second one kills them)");
        signal_running(signal_number, /*by_supervisor=*/false);
      } else if (result_.stop_requests == 2) {
        message(std::string("got ") + signal_name(signal_number) + " again; killing the " + options_.noun_plural);
        signal_running(SIGKILL, /*by_supervisor=*/true);
        escalation_ = Escalation::killed;
      }
    }
  }

  // Signals each running child's process group (the child and whatever it started); a child
  // that moved to a group of its own (setsid) is signalled by pid.
  void signal_running(int signal_number, bool by_supervisor) {
    for (SupervisedChild& child : children_) {
      if (child.reaped) continue;
      if (::kill(-child.pid, signal_number) != 0) ::kill(child.pid, signal_number);
      if (by_supervisor) child.ended_by_supervisor = true;
    }
  }

  void reap_ended_children() {
    for (SupervisedChild& child : children_) {
      if (child.reaped) continue;
      int status = 0;
      pid_t reaped = 0;
      do {
        reaped = ::waitpid(child.pid, &status, WNOHANG);
      } while (reaped < 0 && errno == EINTR);
      if (reaped == 0) continue;  // still running
      // ECHILD: another thread reaped it (waitpid(-1) elsewhere). Its status is gone; count it as
      // a failure rather than wait for a process that no longer exists.
      record_end(child, reaped < 0 ? ExitStatus{1, 0} : exit_status_from_wait(status));
    }
  }

  void record_end(SupervisedChild& child, ExitStatus status) {
    child.reaped = true;
    child.end = Clock::now();
    child.status = status;
    // Its last output first, so that it precedes the message about its end.
    for (LineRelay& relay : child.output) relay.drain(kMaxDrainChunks);
    if (!status.succeeded() && !child.ended_by_supervisor && !result_.first_failed) on_first_failure(child);
    if (child.id == options_.lead_id && options_.lead_exit_grace_seconds >= 0) on_lead_exit();
  }

  // The lead has reported the group's ending: the others get a short grace, not the full one.
  void on_lead_exit() {
    if (!others_running()) return;
    const Clock::time_point deadline = Clock::now() + seconds_as_duration(options_.lead_exit_grace_seconds);
    if (escalation_ == Escalation::none) {
      escalation_ = Escalation::grace;
      escalation_deadline_ = deadline;
    } else if (escalation_ == Escalation::grace) {
      escalation_deadline_ = std::min(escalation_deadline_, deadline);
    }
  }

  void on_first_failure(const SupervisedChild& child) {
    result_.first_failed = static_cast<std::size_t>(&child - children_.data());
    const double seconds = std::chrono::duration<double>(child.end - child.start).count();
    result_.failure = name(child) + " " + child.status.describe() + " after " + format_tenths(seconds) + " s";
    if (!others_running() || escalation_ != Escalation::none) {
      message(name(child) + " " + child.status.describe());
      return;
    }
    message(name(child) + " " + child.status.describe() + "; ending the other " + options_.noun_plural + " (grace " +
            format_seconds(options_.failure_grace_seconds) + " s)");
    escalation_ = Escalation::grace;
    escalation_deadline_ = Clock::now() + seconds_as_duration(options_.failure_grace_seconds);
  }

  // Grace over: SIGTERM; kSigtermBeforeSigkill later: SIGKILL. Children that end on their own
  // meanwhile are simply reaped; the steps only touch those still running.
  void advance_escalation() {
    const Clock::time_point now = Clock::now();
    if (escalation_ == Escalation::grace && now >= escalation_deadline_) {
      announce_escalation("SIGTERM");
      signal_running(SIGTERM, /*by_supervisor=*/true);
      // A stopped child (SIGSTOP, a debugger detached) holds SIGTERM pending until resumed.
      signal_running(SIGCONT, /*by_supervisor=*/true);
      escalation_ = Escalation::terminating;
      escalation_deadline_ = now + kSigtermBeforeSigkill;
    } else if (escalation_ == Escalation::terminating && now >= escalation_deadline_) {
      announce_escalation("SIGKILL");
      signal_running(SIGKILL, /*by_supervisor=*/true);
      escalation_ = Escalation::killed;
    }
  }

  void announce_escalation(const char* signal_text) {
    std::string running;
    for (const SupervisedChild& child : children_) {
      if (child.reaped) continue;
      running += (running.empty() ? "" : ", ") + std::to_string(child.id);
    }
    if (running.empty()) return;
    const std::string why = result_.first_failed ? "after " + name(children_[*result_.first_failed]) + " failed"
                                                 : "after " + options_.noun + " " + std::to_string(options_.lead_id) +
                                                       " ended";
    message("still running " + why + ": " + options_.noun + "(s) " + running + "; sending " + signal_text);
  }

  // Pipes of a reaped child that are still open belong to processes it left behind; after
  // kOrphanDrain the supervisor stops reading them.
  void stop_reading_orphaned_pipes() {
    const Clock::time_point now = Clock::now();
    for (SupervisedChild& child : children_) {
      if (!child.reaped || now < child.end + kOrphanDrain) continue;
      for (LineRelay& relay : child.output) {
        if (!relay.is_open()) continue;
        relay.drain(kMaxDrainChunks);
        if (!relay.is_open()) continue;
        message(name(child) + " ended but processes it started still hold its output open; no longer relaying it");
        relay.close();
      }
    }
  }

  std::vector<SupervisedChild>& children_;
  SignalScope& signals_;
  const SupervisorOptions& options_;
  Escalation escalation_ = Escalation::none;
  Clock::time_point escalation_deadline_;
  SupervisionResult result_;
};

}  // namespace

SupervisionResult supervise(std::vector<SupervisedChild>& children, SignalScope& signals,
                            const SupervisorOptions& options) {
  return Supervisor(children, signals, options).run();
}

ReapOnUnwind::~ReapOnUnwind() {
  for (SupervisedChild& child : children_) {
    if (child.pid <= 0 || child.reaped) continue;
    ::kill(-child.pid, SIGKILL);
    ::kill(child.pid, SIGKILL);
    while (::waitpid(child.pid, nullptr, 0) < 0 && errno == EINTR) {
    }
    child.reaped = true;
  }
}

}  // namespace tokbench::process
