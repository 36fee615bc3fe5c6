// Files a reader never sees half-written, and two writers never corrupt: each write goes to a
// temporary file of its own (a unique name beside the target), is flushed to the disk (fsync),
// and is renamed over the target; the folder is synced after, so the rename survives a crash
// too. A reader sees the old file or the new one, whole. Every result, row and report
// tokbench writes goes through here (results, rows, reports, memory snapshots).
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

namespace tokbench::files {

// Writes `text` to `path` as above (mode 0644). Throws std::runtime_error naming the path and
// the system's reason; the temporary is removed on failure.
void write_file_atomically(const std::filesystem::path& path, std::string_view text);

// Why write_file_atomically could not write `path` now ("" when it could): the path is a
// directory, its folder does not exist, a file cannot be created in that folder (tried: a
// temporary is created beside `path` and removed, which also tells a read-only file system, a
// deleted working directory and what permission bits alone do not say for root), or the file
// exists and is not writable. For a check before any work; the write itself may still fail
// later (a full disk), and says so then.
std::string why_not_writable(const std::filesystem::path& path);

// For a writer that must create the file itself (libxlsxwriter takes a path): a fresh, empty
// temporary file beside `path`, and the commit that syncs it and renames it over `path`
// (removing the temporary when that fails).
std::filesystem::path temporary_beside(const std::filesystem::path& path);
void commit_temporary(const std::filesystem::path& temporary, const std::filesystem::path& path);

}  // namespace tokbench::files
