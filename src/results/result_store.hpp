// The history of results: a SQLite database holding every sweep and every run — its result
// document, the columns people filter on, its environment (tokbench version and revision,
// LibTorch version, device, host, time) and its per-iteration times — and every stored
// benchmark of collectives (`tokbench comm`: its document and one row per collective and size). A sweep resumed into the
// same output folder updates its rows instead of adding more. Several sweeps may write one store
// at once: each save is one transaction that waits its turn (rollback journal, busy timeout),
// and a reader opens it read-only and leaves nothing beside it.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace tokbench::results {

struct StoredSweep {
  int64_t id = 0;
  std::string created;   // RFC 3339
  std::string out_dir;
  int64_t runs = 0;
};

// A stored `tokbench comm` benchmark, as `tokbench history` lists it.
struct StoredCommRun {
  int64_t id = 0;
  std::string created;  // RFC 3339
  std::string backend, device, dtype, host;
  int64_t world_size = 0;
  int64_t results = 0;  // rows (collective x size)
};

class ResultStore {
 public:
  // How long a writer or a reader waits for another process's transaction on the store before
  // giving up (std::runtime_error): a save is milliseconds, so this is only reached by a stuck one.
  static constexpr int kBusyTimeoutMs = 60000;

  // Opens the store for writing, creating it (and marking it as tokbench's) when the file does
  // not exist. An existing file that is not a tokbench store (not SQLite, another program's
  // database, a newer store schema, a damaged store) is refused and never written to:
  // std::invalid_argument naming the file and what it is. A store an older tokbench left in WAL
  // mode is returned to the rollback journal. Other failures: std::runtime_error naming the file.
  explicit ResultStore(const std::filesystem::path& path);
  // Opens an existing store read-only; refuses a missing file (it creates nothing), every file
  // the constructor refuses, and a store SQLite cannot read (damaged pages, missing tables or
  // columns, rows that are not run records): std::invalid_argument "'FILE' is not a readable
  // tokbench result store: <SQLite's reason>", also from the reading calls below. It creates no
  // file beside the store (no -journal, -wal or -shm), whatever state the store is in.
  static std::unique_ptr<ResultStore> open_for_reading(const std::filesystem::path& path);
  ~ResultStore();
  ResultStore(const ResultStore&) = delete;
  ResultStore& operator=(const ResultStore&) = delete;

  // Records a sweep (keyed by its output folder) and its runs in one transaction; returns the
  // sweep's id. Another writer's save in progress is waited for (kBusyTimeoutMs), so concurrent
  // sweeps on one store each keep every row.
  int64_t save_sweep(const std::filesystem::path& out_dir, const nlohmann::json& context,
                     const std::vector<nlohmann::json>& runs);

  // Records one `tokbench comm` document (docs/comm.md: schema "tokbench-comm") and a row per
  // result, in one transaction as save_sweep; returns its id. Each save adds a benchmark: a
  // measurement is not a configuration to resume.
  int64_t save_comm_run(const nlohmann::json& document);

  // Visits every stored comm benchmark, newest first, one row at a time (none in a store written
  // before comm benchmarks were stored, which has no table for them).
  void for_each_comm_run(const std::function<void(const StoredCommRun&)>& visit) const;

  // Visits every sweep, newest first, one row at a time: a listing holds one sweep's line in
  // memory, never the runs (their count comes from the index).
  void for_each_sweep(const std::function<void(const StoredSweep&)>& visit) const;
  std::vector<StoredSweep> sweeps() const;  // the same, collected
  // Runs of one sweep, or of every sweep (sweep_id 0), newest sweep first, one at a time;
  // `filter` keeps runs whose model, executor, mode, status or device contains it (empty: all).
  // Each is its result document plus "sweep_id".
  void for_each_run(int64_t sweep_id, const std::string& filter,
                    const std::function<void(nlohmann::json&&)>& visit) const;
  std::vector<nlohmann::json> runs(int64_t sweep_id, const std::string& filter) const;  // collected

 private:
  ResultStore(const std::filesystem::path& path, bool read_only);
  void check_is_ours() const;  // throws std::invalid_argument
  struct Db;
  std::unique_ptr<Db> db_;
};

// The default store: tokbench-results.sqlite beside the sweep's outputs.
std::filesystem::path default_store_path(const std::filesystem::path& out_dir);

}  // namespace tokbench::results
