// Relays one child's output pipe to a FILE* in whole lines, each optionally prefixed ("[rank 1] "),
// so that children sharing a sink never interleave inside a line. An unprefixed stream stays
// byte-exact (rank 0's stdout may be JSON a caller parses); a "line" longer than kMaxPendingLine
// is written out anyway, so one child cannot make the relay hold unbounded memory.
// Torch-free: POSIX and the standard library.
#pragma once

#include "process/unique_fd.hpp"

#include <cstddef>
#include <cstdio>
#include <string>
#include <string_view>

namespace tokbench::process {

// Large enough for rank 0's one-line JSON report, which must not be split by another rank's line.
inline constexpr std::size_t kMaxPendingLine = 1024 * 1024;

class LineRelay {
 public:
  LineRelay() = default;
  // `pipe` should be non-blocking: relay_available() reads what is there and returns.
  // An empty prefix passes the stream through unprefixed.
  LineRelay(Fd pipe, std::FILE* sink, std::string prefix);

  bool is_open() const { return pipe_.is_open(); }
  int fd() const { return pipe_.get(); }

  enum class Outcome { data, would_block, end };
  // One read() of what the pipe holds now; its complete lines go to the sink. At the end (EOF, or
  // a read error other than EAGAIN/EINTR: nothing more will come) the relay closes itself.
  Outcome relay_available();
  // Reads until the pipe is empty, has ended (then closes) or max_chunks reads were made: for a
  // child just reaped, whose background processes could keep writing forever.
  void drain(int max_chunks);
  // Writes the partial last line (a prefixed one gets a newline, so that the next prefix starts
  // a line) and closes the pipe.
  void close();

 private:
  void emit(std::string_view text);
  void emit_complete_lines();

  Fd pipe_;
  std::string pending_;  // read, not yet a whole line
  std::FILE* sink_ = nullptr;
  std::string prefix_;
};

}  // namespace tokbench::process
