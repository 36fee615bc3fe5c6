// SQLite behind ResultStore (result_store.hpp). Statements are prepared per call: the store
// is written once per sweep, so clarity beats caching them.
//
// Why a rollback journal and not WAL: a WAL database cannot be read, even read-only, without
// its -wal and -shm files, which a reader creates beside the store and leaves there; `history`
// and `compare` must create nothing. Rollback-journal readers take a shared lock and write
// nothing. Concurrent writers are serialised by SQLite's locks: each save is one BEGIN
// IMMEDIATE transaction (it takes the write lock before reading, so two writers cannot
// deadlock upgrading), and the busy timeout makes the second wait for the first.
#include "results/result_store.hpp"

#include <fmt/format.h>
#include <sqlite3.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <ctime>
#include <fstream>
#include <stdexcept>

#include "machine/environment_keys.hpp"
#include "results/comm_document_keys.hpp"
#include "results/read_result.hpp"
#include "results/record_blocks.hpp"
#include "results/record_keys.hpp"
#include "results/store_keys.hpp"

namespace tokbench::results {

// The environment block's keys (machine::environment_record writes it).
namespace env_key = machine::environment_key;
// `tokbench comm`'s document's keys (its comm_runs and comm_results tables).
namespace ck = comm_document_key;

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
CREATE TABLE IF NOT EXISTS comm_runs (
  id INTEGER PRIMARY KEY,
  created TEXT NOT NULL,
  backend TEXT, device TEXT, world_size INTEGER, nnodes INTEGER, nproc_per_node INTEGER, dtype TEXT,
  tokbench_version TEXT, git_revision TEXT, libtorch_version TEXT, host TEXT, time TEXT,
  document TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS comm_results (
  comm_run_id INTEGER NOT NULL REFERENCES comm_runs(id) ON DELETE CASCADE,
  collective TEXT NOT NULL, size_bytes INTEGER NOT NULL, count INTEGER NOT NULL,
  time_us REAL, min_time_us REAL, max_time_us REAL, algbw_GBps REAL, busbw_GBps REAL, correct INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS comm_results_by_run ON comm_results(comm_run_id);
)sql";
// The comm tables were added to layout version 1 rather than making a version 2: they are new
// tables beside the old ones, which an older tokbench reads and writes as before (it checks for
// its three tables, not for the absence of others), so its stores stay usable both ways.

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

nlohmann::json at(const nlohmann::json& j, const char* key) {
  return j.is_object() && j.contains(key) ? j.at(key) : nlohmann::json(nullptr);
}

// `key` of the environment block: the record's (key::environment), or another document's
// (`block`: the comm document's).
nlohmann::json environment_field(const nlohmann::json& run, const char* key, const char* block = key::environment) {
  const auto environment = at(run, block);
  return environment.is_object() ? at(environment, key) : nullptr;
}

// SQLite's file header (the first 100 bytes) says WAL in its read/write version bytes (2).
bool header_says_wal(const std::filesystem::path& path) {
  std::array<char, 100> header{};
  std::ifstream in(path, std::ios::binary);
  if (!in.read(header.data(), header.size())) return false;
  static constexpr char kMagic[] = "SQLite format 3";  // with its NUL: 16 bytes
  return std::equal(kMagic, kMagic + 16, header.begin()) && (header[18] == 2 || header[19] == 2);
}

// A file: URI naming `path`, for the query parameters only a URI can give.
std::string file_uri(const std::filesystem::path& path, const char* query) {
  std::string uri = "file:";
  for (const unsigned char c : std::filesystem::absolute(path).string()) {
    if (std::isalnum(c) || c == '/' || c == '.' || c == '-' || c == '_' || c == '~') {
      uri += static_cast<char>(c);
    } else {
      uri += fmt::format("%{:02X}", c);
    }
  }
  return uri + "?" + query;
}

// Text from the file (SQLite quotes a damaged schema's bytes in its reasons; a table's name is
// anything) made fit for a one-line refusal: control and non-ASCII bytes become '?', and a long
// text is cut.
std::string printable(const std::string& text) {
  std::string out;
  for (const char c : text.substr(0, 200)) out += c >= 0x20 && c < 0x7f ? c : '?';
  return text.size() > 200 ? out + "..." : out;
}

}  // namespace

// Named rather than anonymous: ResultStore::Db, a class of the header, derives from Connection,
// and a base of internal linkage would make GCC warn (-Wsubobject-linkage) in a unity build.
namespace sqlite_connection {

// The open database and what its failures mean (ResultStore::Db is one).
struct Connection {
  sqlite3* handle = nullptr;
  std::filesystem::path path;
  bool read_only = false;

  // What a failure of SQLite means here. The machine's troubles (another process holding the
  // store past the busy timeout, memory, the disk) are std::runtime_error. The file's (not a
  // database, damaged pages, a schema or rows that are not tokbench's) are a usage error, the
  // file named: a reader says the store is not readable; a writer says so too when the file
  // itself is damaged, and is std::runtime_error otherwise (its own statements failing).
  [[noreturn]] void fail(int rc) const {
    const std::string reason = printable(handle != nullptr ? sqlite3_errmsg(handle) : sqlite3_errstr(rc));
    const int primary = rc & 0xff;
    const std::string file = "'" + path.string() + "'";
    if (primary == SQLITE_NOTADB)
      throw std::invalid_argument(file + " is not a tokbench result store: it is not an SQLite database (" + reason + ")");
    if (rc == SQLITE_READONLY_ROLLBACK)
      throw std::invalid_argument(file + " is not a readable tokbench result store now: a writer stopped in the middle "
                                         "of a save and left its -journal beside it; the next sweep that writes this "
                                         "store rolls that save back");
    const bool machine = primary == SQLITE_BUSY || primary == SQLITE_LOCKED || primary == SQLITE_NOMEM ||
                         primary == SQLITE_INTERRUPT || primary == SQLITE_IOERR || primary == SQLITE_FULL;
    const bool damaged = primary == SQLITE_CORRUPT || primary == SQLITE_FORMAT || primary == SQLITE_SCHEMA;
    if (!machine && (read_only || damaged))
      throw std::invalid_argument(file + " is not a readable tokbench result store: " + reason);
    throw std::runtime_error("result store " + file + ": " + reason);
  }
  [[noreturn]] void refuse(const std::string& what) const {
    throw std::invalid_argument("'" + path.string() + "' is not a readable tokbench result store: " + what);
  }
  void exec(const char* sql) const {
    const int rc = sqlite3_exec(handle, sql, nullptr, nullptr, nullptr);
    if (rc != SQLITE_OK) fail(rc);
  }
};

class Statement {
 public:
  Statement(const Connection& db, const char* sql) : db_(db) {
    const int rc = sqlite3_prepare_v2(db.handle, sql, -1, &stmt_, nullptr);
    if (rc != SQLITE_OK) db.fail(rc);
  }
  ~Statement() { sqlite3_finalize(stmt_); }
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  Statement& bind(int i, const std::string& v) {
    sqlite3_bind_text(stmt_, i, v.c_str(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
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
    db_.fail(rc);
  }
  int64_t integer(int column) const { return sqlite3_column_int64(stmt_, column); }
  int type(int column) const { return sqlite3_column_type(stmt_, column); }
  // The whole value as text, NUL bytes included (a damaged row may hold them).
  std::string text(int column) const {
    const auto* p = sqlite3_column_text(stmt_, column);
    return p ? std::string(reinterpret_cast<const char*>(p), static_cast<std::size_t>(sqlite3_column_bytes(stmt_, column)))
             : std::string();
  }

 private:
  const Connection& db_;
  sqlite3_stmt* stmt_ = nullptr;
};

}  // namespace sqlite_connection

using sqlite_connection::Connection;
using sqlite_connection::Statement;

struct ResultStore::Db : Connection {};

ResultStore::ResultStore(const std::filesystem::path& path) : ResultStore(path, false) {}

std::unique_ptr<ResultStore> ResultStore::open_for_reading(const std::filesystem::path& path) {
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (std::filesystem::is_directory(status))
    throw std::invalid_argument("'" + path.string() + "' is not a tokbench result store: it is a directory");
  if (std::filesystem::exists(status) && !std::filesystem::is_regular_file(status))
    throw std::invalid_argument("'" + path.string() + "' is not a tokbench result store: it is not a regular file");
  if (!std::filesystem::is_regular_file(status))
    throw std::invalid_argument("'" + path.string() + "' is not a tokbench result store: no such file");
  return std::unique_ptr<ResultStore>(new ResultStore(path, true));
}

ResultStore::ResultStore(const std::filesystem::path& path, bool read_only) : db_(std::make_unique<Db>()) {
  db_->path = path;
  db_->read_only = read_only;
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  const bool existed = !ec && size > 0;
  if (read_only && !existed)
    throw std::invalid_argument("'" + path.string() + "' is not a tokbench result store: it is empty");
  std::string name = path.string();
  int flags = read_only ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
  if (read_only && header_says_wal(path)) {
    // A store an older tokbench wrote in WAL mode. Without a -wal file all of it is in the main
    // file: read it as immutable, which needs no -shm (a normal open would create -wal and -shm
    // and leave them). With a -wal (its writer running, or stopped before it checkpointed) the
    // data is there too: read it normally when its -shm is there as well, so nothing is created.
    const bool wal = std::filesystem::exists(path.string() + "-wal", ec);
    const bool shm = std::filesystem::exists(path.string() + "-shm", ec);
    if (!wal) {
      name = file_uri(path, "immutable=1");
      flags |= SQLITE_OPEN_URI;
    } else if (!shm) {
      throw std::invalid_argument("'" + path.string() + "' is not a readable tokbench result store now: it is in WAL "
                                  "mode with a -wal file and no -shm beside it, and reading it would create one; a "
                                  "sweep writing it once returns it to a rollback journal");
    }
  }
  const int rc = sqlite3_open_v2(name.c_str(), &db_->handle, flags, nullptr);
  if (rc != SQLITE_OK) {
    const std::string why = printable(db_->handle ? sqlite3_errmsg(db_->handle) : "out of memory");
    sqlite3_close(db_->handle);
    db_->handle = nullptr;
    if (read_only)
      throw std::invalid_argument("'" + path.string() + "' is not a readable tokbench result store: " + why);
    throw std::runtime_error("result store '" + path.string() + "': " + why);
  }
  sqlite3_extended_result_codes(db_->handle, 1);
  sqlite3_busy_timeout(db_->handle, kBusyTimeoutMs);
  if (existed) check_is_ours();  // before anything is written
  if (read_only) return;
  // Back to the rollback journal from the WAL an older tokbench chose (see the file's top). It
  // needs the store to itself; while another connection holds it in WAL, the next writer tries.
  bool wal = false;
  {
    Statement mode(*db_, "PRAGMA journal_mode");  // finalized before the change: it reads the store
    wal = mode.step() && mode.text(0) == "wal";
  }
  if (wal) sqlite3_exec(db_->handle, "PRAGMA journal_mode=DELETE", nullptr, nullptr, nullptr);
  db_->exec("PRAGMA foreign_keys=ON");
  // The layout and the mark in one write transaction: two sweeps creating one store at once
  // each wait for the other instead of failing with "database is locked".
  db_->exec("BEGIN IMMEDIATE");
  try {
    db_->exec(kSchema);
    db_->exec(kMarkAsOurs);
    db_->exec("COMMIT");
  } catch (...) {
    sqlite3_exec(db_->handle, "ROLLBACK", nullptr, nullptr, nullptr);
    throw;
  }
}

ResultStore::~ResultStore() { sqlite3_close(db_->handle); }

void ResultStore::check_is_ours() const {
  auto refuse = [&](const std::string& what) {
    throw std::invalid_argument("'" + db_->path.string() + "' is not a tokbench result store: " + what);
  };
  int64_t application_id = 0, version = 0;
  std::vector<std::string> tables;
  Statement id(*db_, "PRAGMA application_id");
  if (id.step()) application_id = id.integer(0);
  Statement user(*db_, "PRAGMA user_version");
  if (user.step()) version = user.integer(0);
  Statement names(*db_, "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name");
  while (names.step()) tables.push_back(names.text(0));
  if (application_id != 0 && application_id != kApplicationId)
    refuse("it is another program's SQLite database (application_id " + std::to_string(application_id) + ")");
  if (version > kStoreVersion)
    refuse("it was written by a newer tokbench (store version " + std::to_string(version) + "; this one reads " +
           std::to_string(kStoreVersion) + ")");
  const std::vector<std::string> ours{store_table::iterations, store_table::runs, store_table::sweeps};
  // The same with the comm benchmarks' tables (sorted by name), which every writer now creates.
  const std::vector<std::string> ours_with_comm{store_table::comm_results, store_table::comm_runs,
                                                 store_table::iterations, store_table::runs, store_table::sweeps};
  if (application_id == 0 && tables != ours && tables != ours_with_comm)  // from before the mark: the tables say
    refuse(tables.empty() ? "it is an SQLite database without tokbench's tables"
                          : "it is an SQLite database of other tables (" + printable(tables.front()) + ", ...)");
  for (const auto& table : ours)
    if (!std::binary_search(tables.begin(), tables.end(), table))
      db_->refuse("it is marked as a tokbench store but has no '" + table + "' table (damaged?)");
}

int64_t ResultStore::save_sweep(const std::filesystem::path& out_dir, const nlohmann::json& context,
                                const std::vector<nlohmann::json>& runs) {
  const std::string dir = std::filesystem::weakly_canonical(out_dir).string();
  db_->exec("BEGIN IMMEDIATE");  // waits (busy timeout) while another writer saves
  try {
    Statement upsert(*db_,
                     "INSERT INTO sweeps(out_dir, created, context) VALUES (?1, ?2, ?3) "
                     "ON CONFLICT(out_dir) DO UPDATE SET context = excluded.context");
    // Text that is not UTF-8 (a log's last line in a message) is stored with U+FFFD, not refused.
    const auto replace = nlohmann::json::error_handler_t::replace;
    upsert.bind(1, dir).bind(2, now_rfc3339()).bind(3, context.dump(-1, ' ', false, replace)).step();
    Statement find(*db_, "SELECT id FROM sweeps WHERE out_dir = ?1");
    find.bind(1, dir).step();
    const int64_t sweep_id = find.integer(0);
    for (const auto& run : runs) {
      const auto id = at(run, key::sweep_config_id);
      const std::string config_id = id.is_string() ? id.get<std::string>() : "single";
      Statement remove(*db_, "DELETE FROM runs WHERE sweep_id = ?1 AND config_id = ?2");
      remove.bind(1, sweep_id).bind(2, config_id).step();
      Statement insert(*db_,
                       "INSERT INTO runs(sweep_id, config_id, status, model_name, compiler, distributed_mode, "
                       "num_gpus, seq_len, micro_bs, global_bs, average_iter_time_ms, tokens_per_sec, "
                       "memory_used_gb, tokbench_version, git_revision, libtorch_version, device_name, host, time, "
                       "result) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, "
                       "?17, ?18, ?19, ?20)");
      insert.bind(1, sweep_id).bind(2, config_id);
      insert.bind_json(3, at(run, key::status)).bind_json(4, at(run, key::model_name)).bind_json(5, at(run, key::compiler));
      insert.bind_json(6, at(run, key::distributed_mode)).bind_json(7, at(run, key::num_gpus));
      insert.bind_json(8, at(run, key::seq_len)).bind_json(9, at(run, key::micro_bs)).bind_json(10, at(run, key::global_bs));
      insert.bind_json(11, at(run, key::average_iter_time)).bind_json(12, at(run, key::tokens_per_sec));
      insert.bind_json(13, at(run, key::memory_used_gb));
      insert.bind_json(14, environment_field(run, env_key::tokbench_version));
      insert.bind_json(15, environment_field(run, env_key::git_revision));
      insert.bind_json(16, environment_field(run, env_key::libtorch_version));
      insert.bind_json(17, at(run, key::device_name)).bind_json(18, environment_field(run, env_key::host));
      insert.bind_json(19, environment_field(run, env_key::time)).bind(20, run.dump(-1, ' ', false, replace));
      insert.step();
      const int64_t run_id = sqlite3_last_insert_rowid(db_->handle);
      auto or_null = [](const auto& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); };
      for (const auto& it : iterations_from_json(at(run, key::iterations))) {
        Statement iteration(*db_,
                            "INSERT INTO iterations(run_id, idx, warmup, time_ms, loss) VALUES (?1, ?2, ?3, ?4, ?5)");
        iteration.bind(1, run_id).bind_json(2, or_null(it.index)).bind(3, int64_t{it.warmup});
        iteration.bind_json(4, or_null(it.time_ms)).bind_json(5, or_null(it.loss)).step();
      }
    }
    db_->exec("COMMIT");
    return sweep_id;
  } catch (...) {
    sqlite3_exec(db_->handle, "ROLLBACK", nullptr, nullptr, nullptr);  // keeps the first error
    throw;
  }
}

int64_t ResultStore::save_comm_run(const nlohmann::json& document) {
  db_->exec("BEGIN IMMEDIATE");  // waits (busy timeout) while another writer saves
  try {
    const auto replace = nlohmann::json::error_handler_t::replace;
    Statement insert(*db_,
                     "INSERT INTO comm_runs(created, backend, device, world_size, nnodes, nproc_per_node, dtype, "
                     "tokbench_version, git_revision, libtorch_version, host, time, document) VALUES (?1, ?2, ?3, ?4, "
                     "?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)");
    insert.bind(1, now_rfc3339()).bind_json(2, at(document, ck::backend)).bind_json(3, at(document, ck::device));
    insert.bind_json(4, at(document, ck::world_size)).bind_json(5, at(document, ck::nnodes));
    insert.bind_json(6, at(document, ck::nproc_per_node)).bind_json(7, at(document, ck::dtype));
    insert.bind_json(8, environment_field(document, env_key::tokbench_version, ck::environment));
    insert.bind_json(9, environment_field(document, env_key::git_revision, ck::environment));
    insert.bind_json(10, environment_field(document, env_key::libtorch_version, ck::environment));
    insert.bind_json(11, environment_field(document, env_key::host, ck::environment));
    insert.bind_json(12, environment_field(document, env_key::time, ck::environment));
    insert.bind(13, document.dump(-1, ' ', false, replace)).step();
    const int64_t id = sqlite3_last_insert_rowid(db_->handle);
    const auto results = at(document, ck::results);
    if (results.is_array()) {
      for (const auto& r : results) {
        Statement row(*db_,
                      "INSERT INTO comm_results(comm_run_id, collective, size_bytes, count, time_us, min_time_us, "
                      "max_time_us, algbw_GBps, busbw_GBps, correct) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)");
        row.bind(1, id).bind_json(2, at(r, ck::collective)).bind_json(3, at(r, ck::size_bytes));
        row.bind_json(4, at(r, ck::count));
        row.bind_json(5, at(r, ck::time_us)).bind_json(6, at(r, ck::min_time_us)).bind_json(7, at(r, ck::max_time_us));
        row.bind_json(8, at(r, ck::algbw_GBps)).bind_json(9, at(r, ck::busbw_GBps));
        row.bind(10, int64_t{at(r, ck::correct) == true}).step();
      }
    }
    db_->exec("COMMIT");
    return id;
  } catch (...) {
    sqlite3_exec(db_->handle, "ROLLBACK", nullptr, nullptr, nullptr);  // keeps the first error
    throw;
  }
}

void ResultStore::for_each_comm_run(const std::function<void(const StoredCommRun&)>& visit) const {
  {
    Statement exists(*db_, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'comm_runs'");
    if (!exists.step()) return;  // a store from before comm benchmarks were stored
  }
  Statement list(*db_,
                 "SELECT c.id, c.created, c.backend, c.device, c.world_size, c.dtype, c.host, "
                 "(SELECT COUNT(*) FROM comm_results r WHERE r.comm_run_id = c.id) FROM comm_runs c ORDER BY c.id DESC");
  while (list.step())
    visit({list.integer(0), list.text(1), list.text(2), list.text(3), list.text(5), list.text(6), list.integer(4),
           list.integer(7)});
}

void ResultStore::for_each_sweep(const std::function<void(const StoredSweep&)>& visit) const {
  // The count per sweep from runs' (sweep_id, config_id) index, row by row: no run's result
  // document is read, and nothing is gathered before the first line can be printed.
  Statement list(*db_,
                 "SELECT s.id, s.created, s.out_dir, (SELECT COUNT(*) FROM runs r WHERE r.sweep_id = s.id) "
                 "FROM sweeps s ORDER BY s.id DESC");
  while (list.step()) visit({list.integer(0), list.text(1), list.text(2), list.integer(3)});
}

std::vector<StoredSweep> ResultStore::sweeps() const {
  std::vector<StoredSweep> out;
  for_each_sweep([&](const StoredSweep& s) { out.push_back(s); });
  return out;
}

void ResultStore::for_each_run(int64_t sweep_id, const std::string& filter,
                               const std::function<void(nlohmann::json&&)>& visit) const {
  Statement query(*db_,
                  "SELECT id, sweep_id, result FROM runs WHERE (?1 = 0 OR sweep_id = ?1) AND (?2 = '' OR "
                  "instr(coalesce(model_name,'') || ' ' || coalesce(compiler,'') || ' ' || "
                  "coalesce(distributed_mode,'') || ' ' || coalesce(status,'') || ' ' || coalesce(device_name,''), ?2) > 0) "
                  "ORDER BY sweep_id DESC, id");
  query.bind(1, sweep_id).bind(2, filter);
  while (query.step()) {
    const int64_t id = query.integer(0), sweep = query.integer(1);
    const std::string row = fmt::format("run {} (sweep {})", id, sweep);
    if (query.type(2) != SQLITE_TEXT) db_->refuse(row + ": its result is not text");
    nlohmann::json run;
    try {
      run = results::parse_run_record(query.text(2));
    } catch (const std::invalid_argument& e) {
      db_->refuse(row + ": " + e.what());
    }
    run[key::sweep_id] = sweep;
    visit(std::move(run));
  }
}

std::vector<nlohmann::json> ResultStore::runs(int64_t sweep_id, const std::string& filter) const {
  std::vector<nlohmann::json> out;
  for_each_run(sweep_id, filter, [&](nlohmann::json&& run) { out.push_back(std::move(run)); });
  return out;
}

std::filesystem::path default_store_path(const std::filesystem::path& out_dir) {
  return out_dir / "tokbench-results.sqlite";
}

}  // namespace tokbench::results
