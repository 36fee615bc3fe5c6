// The history of results: a SQLite database (WAL, one transaction per write) holding every
// sweep and every run — its result document, the columns people filter on, its environment
// (tokbench version and revision, LibTorch version, device, host, time) and its per-iteration
// times. A sweep resumed into the same output folder updates its rows instead of adding more.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

namespace tokbench::sweep {

struct StoredSweep {
  int64_t id = 0;
  std::string created;   // RFC 3339
  std::string out_dir;
  int64_t runs = 0;
};

class ResultStore {
 public:
  // Opens the store for writing, creating it (and marking it as tokbench's) when the file does
  // not exist. An existing file that is not a tokbench store (not SQLite, another program's
  // database, a newer store schema) is refused and never written to: std::invalid_argument
  // naming the file and what it is. Other failures: std::runtime_error naming the file.
  explicit ResultStore(const std::filesystem::path& path);
  // Opens an existing store read-only; refuses a missing file (it creates nothing) and every
  // file the constructor refuses, the same way.
  static std::unique_ptr<ResultStore> open_for_reading(const std::filesystem::path& path);
  ~ResultStore();
  ResultStore(const ResultStore&) = delete;
  ResultStore& operator=(const ResultStore&) = delete;

  // Records a sweep (keyed by its output folder) and its runs; returns the sweep's id.
  int64_t save_sweep(const std::filesystem::path& out_dir, const nlohmann::json& context,
                     const std::vector<nlohmann::json>& runs);

  std::vector<StoredSweep> sweeps() const;
  // Runs of one sweep, or of every sweep (sweep_id 0), newest sweep first; `filter` keeps runs
  // whose model, executor, mode, status or device contains it (empty: all).
  std::vector<nlohmann::json> runs(int64_t sweep_id, const std::string& filter) const;

 private:
  ResultStore(const std::filesystem::path& path, bool read_only);
  void check_is_ours(const std::filesystem::path& path) const;  // throws std::invalid_argument
  struct Db;
  std::unique_ptr<Db> db_;
};

// The default store: tokbench-results.sqlite beside the sweep's outputs.
std::filesystem::path default_store_path(const std::filesystem::path& out_dir);

}  // namespace tokbench::sweep
