// One sweep per output folder: a sweep holds an exclusive lock on OUT/.tokbench-sweep.lock for
// its whole life, so a second sweep into the same --out (which would run the same
// configurations twice and race on their result files) is refused at once, naming the holder.
// The lock is flock(2) on a file that stays: the kernel drops it when the holder ends however it
// ends (SIGKILL included), so a stale lock cannot outlive a crash and nothing has to be cleaned
// up. The file holds the holder's description (pid, host, start, command) for the refusal.
// Child processes never inherit it (close-on-exec).
#pragma once

#include <filesystem>
#include <string>

namespace tokbench::sweep {

class SweepFolderLock {
 public:
  // Creates `out_dir` when missing and takes the lock; throws std::invalid_argument (exit 2)
  // with one line naming the folder and the holder when another sweep has it, and
  // std::runtime_error when the lock file cannot be opened.
  explicit SweepFolderLock(const std::filesystem::path& out_dir, const std::string& description);
  ~SweepFolderLock();
  SweepFolderLock(const SweepFolderLock&) = delete;
  SweepFolderLock& operator=(const SweepFolderLock&) = delete;

 private:
  int fd_ = -1;
};

// The lock file of a sweep folder.
std::filesystem::path sweep_lock_path(const std::filesystem::path& out_dir);

}  // namespace tokbench::sweep
