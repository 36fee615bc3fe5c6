// A full disk for tests, without root (a tmpfs of a chosen size needs mount): loaded with
// LD_PRELOAD, it makes write(), pwrite(), writev() and fsync()/fdatasync() on files fail with
// ENOSPC, as a full filesystem does, when the file's path starts with $TOKBENCH_ENOSPC_UNDER and
// contains $TOKBENCH_ENOSPC_NAMED. The name filter picks which configuration of a sweep meets the
// full disk (its id is in its result's, temporary's and log's names), so a test knows which runs
// finished before it without timing anything. Every other file, and every process without the
// variables, writes as usual. Used by tests/sweep/cli_sweep.py (scenario disk_full).
#include <dlfcn.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

// Whether writes to `fd` should find the disk full.
bool disk_full_for(int fd) {
  const char* under = getenv("TOKBENCH_ENOSPC_UNDER");
  const char* named = getenv("TOKBENCH_ENOSPC_NAMED");
  if (under == nullptr || *under == '\0' || named == nullptr || *named == '\0') return false;
  char link[64];
  char path[4096];
  std::snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  const ssize_t n = readlink(link, path, sizeof path - 1);
  if (n <= 0) return false;
  path[n] = '\0';
  return std::strncmp(path, under, std::strlen(under)) == 0 && std::strstr(path, named) != nullptr;
}

// libc's own function of that name, which the ones below stand in front of.
template <typename Function>
Function* next(const char* name) {
  return reinterpret_cast<Function*>(dlsym(RTLD_NEXT, name));
}

}  // namespace

extern "C" {

ssize_t write(int fd, const void* data, size_t size) {
  if (size > 0 && disk_full_for(fd)) {
    errno = ENOSPC;
    return -1;
  }
  return next<decltype(write)>("write")(fd, data, size);
}

ssize_t pwrite(int fd, const void* data, size_t size, off_t offset) {
  if (size > 0 && disk_full_for(fd)) {
    errno = ENOSPC;
    return -1;
  }
  return next<decltype(pwrite)>("pwrite")(fd, data, size, offset);
}

ssize_t writev(int fd, const struct iovec* parts, int count) {
  if (disk_full_for(fd)) {
    errno = ENOSPC;
    return -1;
  }
  return next<decltype(writev)>("writev")(fd, parts, count);
}

int fsync(int fd) {
  if (disk_full_for(fd)) {
    errno = ENOSPC;
    return -1;
  }
  return next<decltype(fsync)>("fsync")(fd);
}

int fdatasync(int fd) {
  if (disk_full_for(fd)) {
    errno = ENOSPC;
    return -1;
  }
  return next<decltype(fdatasync)>("fdatasync")(fd);
}

}  // extern "C"
