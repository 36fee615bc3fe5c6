// folder_lock.hpp: flock on OUT/.tokbench-sweep.lock, the holder's description inside.
#include "sweep/folder_lock.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>

namespace tokbench::sweep {
namespace {

// Reads the holder's description; it is one line of ours, bounded.
std::string holder_of(int fd) {
  char buffer[1024] = {};
  const ssize_t n = ::pread(fd, buffer, sizeof buffer - 1, 0);
  std::string text = n > 0 ? std::string(buffer, static_cast<std::size_t>(n)) : std::string();
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  return text.empty() ? std::string("a sweep that has not yet written its name") : text;
}

}  // namespace

std::filesystem::path sweep_lock_path(const std::filesystem::path& out_dir) { return out_dir / ".tokbench-sweep.lock"; }

SweepFolderLock::SweepFolderLock(const std::filesystem::path& out_dir, const std::string& description) {
  std::filesystem::create_directories(out_dir);
  const auto path = sweep_lock_path(out_dir);
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0) throw std::runtime_error(fmt::format("cannot open {}: {}", path.string(), std::strerror(errno)));
  int rc = 0;
  do rc = ::flock(fd_, LOCK_EX | LOCK_NB);
  while (rc != 0 && errno == EINTR);
  if (rc != 0) {
    const int error = errno;
    const std::string holder = error == EWOULDBLOCK ? holder_of(fd_) : std::string();
    ::close(fd_);
    fd_ = -1;
    if (error == EWOULDBLOCK)
      throw std::invalid_argument(fmt::format("--out '{}' is in use by another sweep ({}); wait for it to end, or "
                                              "give this one another --out", out_dir.string(), holder));
    throw std::runtime_error(fmt::format("cannot lock {}: {}", path.string(), std::strerror(error)));
  }
  // Ours now: the description replaces the last holder's (best effort: the lock holds without it).
  const std::string line = description + "\n";
  if (::ftruncate(fd_, 0) == 0) (void)!::pwrite(fd_, line.data(), line.size(), 0);
}

SweepFolderLock::~SweepFolderLock() {
  if (fd_ >= 0) ::close(fd_);  // releases the lock; the file stays for the next sweep
}

}  // namespace tokbench::sweep
