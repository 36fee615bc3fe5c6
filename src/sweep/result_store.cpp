// SQLite behind ResultStore (result_store.hpp). Statements are prepared per call: the store
// is written once per sweep, so clarity beats caching them.
#include "sweep/result_store.hpp"

#include <sqlite3.h>

#include <ctime>
#include <stdexcept>

namespace tokbench::sweep {
namespace {

constexpr const char* kSchema = R"sql(
CREATE TABLE IF NOT EXISTS sweeps (
  id INTEGER PRIMARY KEY,
  out_dir TEXT UNIQUE NOT NULL,
  created TEXT NOT NULL,
  context TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS runs (
  id INTEGER PRIMARY KEY,
  sweep_id INTEGER NOT NULL REFERENCES sweeps(id),
  config_id TEXT NOT NULL,
  status TEXT, model_name TEXT, compiler TEXT, distributed_mode TEXT,
  num_gpus INTEGER, seq_len INTEGER, micro_bs INTEGER, global_bs INTEGER,
  average_iter_time_ms REAL, tokens_per_sec REAL, memory_used_gb REAL,
  tokbench_version TEXT, git_revision TEXT, libtorch_version TEXT, device_name TEXT, host TEXT, time TEXT,
  result TEXT NOT NULL,
  UNIQUE (sweep_id, config_id));
CREATE TABLE IF NOT EXISTS iterations (
  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  idx INTEGER NOT NULL, warmup INTEGER NOT NULL, time_ms REAL, loss REAL);
CREATE INDEX IF NOT EXISTS iterations_by_run ON iterations(run_id);
)sql";

// A tokbench store says so in its header (PRAGMA application_id, "tkbr"), and its layout's
// version in PRAGMA user_version.
constexpr int64_t kApplicationId = 0x746b6272;
constexpr int64_t kStoreVersion = 1;
constexpr const char* kMarkAsOurs = "PRAGMA application_id = 1953194610; PRAGMA user_version = 1;";
static_assert(kApplicationId == 1953194610);  // the number kMarkAsOurs writes

std::string now_rfc3339() {
  const std::time_t t = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&t, &utc);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text;
}

class Statement {
 public:
  Statement(sqlite3* db, const char* sql) : db_(db) {
    if (sqlite3_prepare_v2(db, sql, -1, &stmt_, nullptr) != SQLITE_OK)
      throw std::runtime_error(std::string("result store: ") + sqlite3_errmsg(db));
  }
  ~Statement() { sqlite3_finalize(stmt_); }
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  Statement& bind(int i, const std::string& v) {
    sqlite3_bind_text(stmt_, i, v.c_str(), -1, SQLITE_TRANSIENT);
    return *this;
  }
  Statement& bind(int i, int64_t v) {
    sqlite3_bind_int64(stmt_, i, v);
    return *this;
  }
  // A JSON value: number, text, or NULL.
  Statement& bind_json(int i, const nlohmann::json& v) {
    if (v.is_number_integer()) {
      sqlite3_bind_int64(stmt_, i, v.get<int64_t>());
    } else if (v.is_number()) {
      sqlite3_bind_double(stmt_, i, v.get<double>());
    } else if (v.is_string()) {
      bind(i, v.get<std::string>());
    } else {
      sqlite3_bind_null(stmt_, i);
    }
    return *this;
  }
  bool step() {
    const int rc = sqlite3_step(stmt_);
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    throw std::runtime_error(std::string("result store: ") + sqlite3_errmsg(db_));
  }
  int64_t integer(int column) const { return sqlite3_column_int64(stmt_, column); }
  std::string text(int column) const {
    const auto* p = sqlite3_column_text(stmt_, column);
    return p ? reinterpret_cast<const char*>(p) : "";
  }

 private:
  sqlite3* db_;
  sqlite3_stmt* stmt_ = nullptr;
};

nlohmann::json at(const nlohmann::json& j, const char* key) {
  return j.contains(key) ? j.at(key) : nlohmann::json(nullptr);
}

nlohmann::json environment_field(const nlohmann::json& run, const char* key) {
  if (!run.contains("environment") || !run["environment"].is_object()) return nullptr;
  return at(run["environment"], key);
}

}  // namespace

struct ResultStore::Db {
  sqlite3* handle = nullptr;
  void exec(const char* sql) const {
    char* error = nullptr;
    if (sqlite3_exec(handle, sql, nullptr, nullptr, &error) != SQLITE_OK) {
      const std::string what = error ? error : "unknown error";
      sqlite3_free(error);
      throw std::runtime_error("result store: " + what);
    }
  }
};

ResultStore::ResultStore(const std::filesystem::path& path) : ResultStore(path, false) {}

std::unique_ptr<ResultStore> ResultStore::open_for_reading(const std::filesystem::path& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))
    throw std::invalid_argument("'" + path.string() + "' is not a tokbench result store: no such file");
  return std::unique_ptr<ResultStore>(new ResultStore(path, true));
}

ResultStore::ResultStore(const std::filesystem::path& path, bool read_only) : db_(std::make_unique<Db>()) {
  std::error_code ec;
  const bool existed = std::filesystem::exists(path, ec) && std::filesystem::file_size(path, ec) > 0;
  const int flags = read_only ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
  if (sqlite3_open_v2(path.c_str(), &db_->handle, flags, nullptr) != SQLITE_OK) {
    const std::string why = db_->handle ? sqlite3_errmsg(db_->handle) : "out of memory";
    sqlite3_close(db_->handle);
    db_->handle = nullptr;
    throw std::runtime_error("result store '" + path.string() + "': " + why);
  }
  sqlite3_busy_timeout(db_->handle, 10000);
  if (existed) check_is_ours(path);  // before anything is written
  if (read_only) return;
  db_->exec("PRAGMA journal_mode=WAL; PRAGMA foreign_keys=ON;");
  db_->exec(kSchema);
  db_->exec(kMarkAsOurs);
}

ResultStore::~ResultStore() { sqlite3_close(db_->handle); }

void ResultStore::check_is_ours(const std::filesystem::path& path) const {
  auto refuse = [&](const std::string& what) {
    throw std::invalid_argument("'" + path.string() + "' is not a tokbench result store: " + what);
  };
  int64_t application_id = 0, version = 0;
  std::vector<std::string> tables;
  try {
    Statement id(db_->handle, "PRAGMA application_id");
    if (id.step()) application_id = id.integer(0);
    Statement user(db_->handle, "PRAGMA user_version");
    if (user.step()) version = user.integer(0);
    Statement names(db_->handle, "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name");
    while (names.step()) tables.push_back(names.text(0));
  } catch (const std::runtime_error&) {
    refuse("it is not an SQLite database");  // SQLite's "file is not a database"
  }
  if (application_id != 0 && application_id != kApplicationId)
    refuse("it is another program's SQLite database (application_id " + std::to_string(application_id) + ")");
  const std::vector<std::string> ours{"iterations", "runs", "sweeps"};
  if (application_id == 0 && tables != ours)  // stores from before the mark: their tables say
    refuse(tables.empty() ? "it is an SQLite database without tokbench's tables"
                          : "it is an SQLite database of other tables (" + tables.front() + ", ...)");
  if (version > kStoreVersion)
    refuse("it was written by a newer tokbench (store version " + std::to_string(version) + "; this one reads " +
           std::to_string(kStoreVersion) + ")");
}

int64_t ResultStore::save_sweep(const std::filesystem::path& out_dir, const nlohmann::json& context,
                                const std::vector<nlohmann::json>& runs) {
  const std::string dir = std::filesystem::weakly_canonical(out_dir).string();
  db_->exec("BEGIN IMMEDIATE");
  try {
    Statement upsert(db_->handle,
                     "INSERT INTO sweeps(out_dir, created, context) VALUES (?1, ?2, ?3) "
                     "ON CONFLICT(out_dir) DO UPDATE SET context = excluded.context");
    upsert.bind(1, dir).bind(2, now_rfc3339()).bind(3, context.dump()).step();
    Statement find(db_->handle, "SELECT id FROM sweeps WHERE out_dir = ?1");
    find.bind(1, dir).step();
    const int64_t sweep_id = find.integer(0);
    for (const auto& run : runs) {
      const std::string config_id = run.value("sweep_config_id", std::string("single"));
      Statement remove(db_->handle, "DELETE FROM runs WHERE sweep_id = ?1 AND config_id = ?2");
      remove.bind(1, sweep_id).bind(2, config_id).step();
      Statement insert(db_->handle,
                       "INSERT INTO runs(sweep_id, config_id, status, model_name, compiler, distributed_mode, "
                       "num_gpus, seq_len, micro_bs, global_bs, average_iter_time_ms, tokens_per_sec, "
                       "memory_used_gb, tokbench_version, git_revision, libtorch_version, device_name, host, time, "
                       "result) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, "
                       "?17, ?18, ?19, ?20)");
      insert.bind(1, sweep_id).bind(2, config_id);
      insert.bind_json(3, at(run, "status")).bind_json(4, at(run, "model_name")).bind_json(5, at(run, "compiler"));
      insert.bind_json(6, at(run, "Distributed Mode")).bind_json(7, at(run, "Num GPUS"));
      insert.bind_json(8, at(run, "Seq Len")).bind_json(9, at(run, "Micro BS")).bind_json(10, at(run, "Global BS"));
      insert.bind_json(11, at(run, "average_iter_time")).bind_json(12, at(run, "tokens_per_sec"));
      insert.bind_json(13, at(run, "memory_used_GB"));
      insert.bind_json(14, environment_field(run, "tokbench_version"));
      insert.bind_json(15, environment_field(run, "git_revision"));
      insert.bind_json(16, environment_field(run, "libtorch_version"));
      insert.bind_json(17, at(run, "device_name")).bind_json(18, environment_field(run, "host"));
      insert.bind_json(19, environment_field(run, "time")).bind(20, run.dump());
      insert.step();
      const int64_t run_id = sqlite3_last_insert_rowid(db_->handle);
      if (run.contains("iterations") && run["iterations"].is_array()) {
        for (const auto& it : run["iterations"]) {
          Statement iteration(db_->handle,
                              "INSERT INTO iterations(run_id, idx, warmup, time_ms, loss) VALUES (?1, ?2, ?3, ?4, ?5)");
          iteration.bind(1, run_id).bind_json(2, at(it, "index")).bind(3, int64_t{at(it, "warmup") == true});
          iteration.bind_json(4, at(it, "time_ms")).bind_json(5, at(it, "loss")).step();
        }
      }
    }
    db_->exec("COMMIT");
    return sweep_id;
  } catch (...) {
    db_->exec("ROLLBACK");
    throw;
  }
}

std::vector<StoredSweep> ResultStore::sweeps() const {
  Statement list(db_->handle,
                 "SELECT s.id, s.created, s.out_dir, COUNT(r.id) FROM sweeps s LEFT JOIN runs r ON r.sweep_id = s.id "
                 "GROUP BY s.id ORDER BY s.id DESC");
  std::vector<StoredSweep> out;
  while (list.step()) out.push_back({list.integer(0), list.text(1), list.text(2), list.integer(3)});
  return out;
}

std::vector<nlohmann::json> ResultStore::runs(int64_t sweep_id, const std::string& filter) const {
  Statement query(db_->handle,
                  "SELECT sweep_id, result FROM runs WHERE (?1 = 0 OR sweep_id = ?1) AND (?2 = '' OR "
                  "instr(coalesce(model_name,'') || ' ' || coalesce(compiler,'') || ' ' || "
                  "coalesce(distributed_mode,'') || ' ' || coalesce(status,'') || ' ' || coalesce(device_name,''), ?2) > 0) "
                  "ORDER BY sweep_id DESC, id");
  query.bind(1, sweep_id).bind(2, filter);
  std::vector<nlohmann::json> out;
  while (query.step()) {
    nlohmann::json run = nlohmann::json::parse(query.text(1));
    run["sweep_id"] = query.integer(0);
    out.push_back(std::move(run));
  }
  return out;
}

std::filesystem::path default_store_path(const std::filesystem::path& out_dir) {
  return out_dir / "tokbench-results.sqlite";
}

}  // namespace tokbench::sweep
