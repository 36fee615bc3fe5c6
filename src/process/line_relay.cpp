// line_relay.hpp.
#include "process/line_relay.hpp"

#include <unistd.h>

#include <cerrno>
#include <utility>

namespace tokbench::process {
namespace {
constexpr std::size_t kReadChunk = 64 * 1024;
}  // namespace

LineRelay::LineRelay(Fd pipe, std::FILE* sink, std::string prefix)
    : pipe_(std::move(pipe)), sink_(sink), prefix_(std::move(prefix)) {}

// `text` ends with '\n' unless it is an unprefixed stream's byte-exact remainder.
void LineRelay::emit(std::string_view text) {
  if (!prefix_.empty()) std::fwrite(prefix_.data(), 1, prefix_.size(), sink_);
  std::fwrite(text.data(), 1, text.size(), sink_);
}

void LineRelay::emit_complete_lines() {
  std::size_t start = 0;
  for (std::size_t newline; (newline = pending_.find('\n', start)) != std::string::npos; start = newline + 1) {
    emit(std::string_view(pending_).substr(start, newline + 1 - start));
  }
  pending_.erase(0, start);
  if (pending_.size() >= kMaxPendingLine) {
    // A prefixed piece gets its own line; the unprefixed stream stays byte-exact.
    if (!prefix_.empty()) pending_.push_back('\n');
    emit(pending_);
    pending_.clear();
  }
  std::fflush(sink_);
}

LineRelay::Outcome LineRelay::relay_available() {
  char buffer[kReadChunk];
  for (;;) {
    const ssize_t n = ::read(pipe_.get(), buffer, sizeof buffer);
    if (n > 0) {
      pending_.append(buffer, static_cast<std::size_t>(n));
      emit_complete_lines();
      return Outcome::data;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return Outcome::would_block;
    close();
    return Outcome::end;
  }
}

void LineRelay::drain(int max_chunks) {
  for (int i = 0; i < max_chunks && is_open(); ++i) {
    if (relay_available() != Outcome::data) return;
  }
}

void LineRelay::close() {
  if (!pending_.empty()) {
    if (!prefix_.empty()) pending_.push_back('\n');
    emit(pending_);
    pending_.clear();
    std::fflush(sink_);
  }
  pipe_.reset();
}

}  // namespace tokbench::process
