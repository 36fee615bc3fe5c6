#pragma once
// tokbench::process::Fd — owns one POSIX file descriptor and closes it once, on every path out;
// moves, never copies. Used wherever a pipe, /dev/null or a duplicated descriptor must not leak
// (the process layer's spawns and the launcher's rank pipes).
#include <unistd.h>

#include <utility>

namespace tokbench::process {

class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  Fd(Fd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  Fd& operator=(Fd&& other) noexcept {
    if (this != &other) {
      reset();
      fd_ = std::exchange(other.fd_, -1);
    }
    return *this;
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() { reset(); }

  int get() const { return fd_; }
  bool is_open() const { return fd_ >= 0; }
  void reset() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

 private:
  int fd_ = -1;
};

}  // namespace tokbench::process
