// Atomic file writes (atomic_file.hpp).
#include "files/atomic_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>

namespace tokbench::files {
namespace {

std::filesystem::path folder_of(const std::filesystem::path& path) {
  return path.has_parent_path() ? path.parent_path() : std::filesystem::path(".");
}

[[noreturn]] void fail(const std::filesystem::path& path, const std::string& what, int error) {
  throw std::runtime_error("cannot write " + path.string() + ": " + what + ": " + std::strerror(error));
}

// A unique temporary beside `path`, open for writing (mode 0644); its name goes to `name`.
int open_temporary(const std::filesystem::path& path, std::string& name) {
  std::string file = ".";  // appended, not `"." + ...`: GCC 12 warns falsely (-Wrestrict) on that
  file += path.filename().string();
  file += ".tmp.XXXXXX";
  name = (folder_of(path) / file).string();
  const int fd = ::mkostemp(name.data(), O_CLOEXEC);
  if (fd < 0) fail(path, "cannot create a temporary file beside it", errno);
  if (::fchmod(fd, 0644) != 0) {
    const int error = errno;
    ::close(fd);
    ::unlink(name.c_str());
    fail(path, "chmod", error);
  }
  return fd;
}

// The rename is in the folder's own data: sync it so the new name survives a crash.
void sync_folder(const std::filesystem::path& path) {
  const int fd = ::open(folder_of(path).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;  // a folder we may not open for reading: the rename stands, unsynced
  ::fsync(fd);
  ::close(fd);
}

}  // namespace

std::string why_not_writable(const std::filesystem::path& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) return "it is a directory";
  const std::filesystem::path folder = folder_of(path);
  if (!std::filesystem::is_directory(folder, ec)) return "folder '" + folder.string() + "' does not exist";
  std::string probe = (folder / ".tokbench-write-check.XXXXXX").string();
  const int fd = ::mkostemp(probe.data(), O_CLOEXEC);
  if (fd < 0) {
    const int error = errno;
    return "folder '" + folder.string() + "' is not writable (" + std::strerror(error) + ")";
  }
  ::close(fd);
  ::unlink(probe.c_str());
  if (std::filesystem::exists(path, ec) && ::access(path.c_str(), W_OK) != 0) return "it exists and is not writable";
  return "";
}

void write_file_atomically(const std::filesystem::path& path, std::string_view text) {
  std::string temporary;
  const int fd = open_temporary(path, temporary);
  std::size_t written = 0;
  int error = 0;
  while (written < text.size() && error == 0) {
    const ssize_t n = ::write(fd, text.data() + written, text.size() - written);
    if (n < 0 && errno != EINTR) error = errno;
    if (n > 0) written += static_cast<std::size_t>(n);
  }
  if (error == 0 && ::fsync(fd) != 0) error = errno;
  if (::close(fd) != 0 && error == 0) error = errno;
  if (error == 0 && ::rename(temporary.c_str(), path.c_str()) != 0) error = errno;
  if (error != 0) {
    ::unlink(temporary.c_str());
    fail(path, "write", error);
  }
  sync_folder(path);
}

std::filesystem::path temporary_beside(const std::filesystem::path& path) {
  std::string temporary;
  ::close(open_temporary(path, temporary));
  return temporary;
}

void commit_temporary(const std::filesystem::path& temporary, const std::filesystem::path& path) {
  int error = 0;
  const int fd = ::open(temporary.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) error = errno;
  if (fd >= 0 && ::fsync(fd) != 0) error = errno;
  if (fd >= 0) ::close(fd);
  if (error == 0 && ::rename(temporary.c_str(), path.c_str()) != 0) error = errno;
  if (error != 0) {
    ::unlink(temporary.c_str());
    fail(path, "commit", error);
  }
  sync_folder(path);
}

}  // namespace tokbench::files
