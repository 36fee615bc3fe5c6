// Fuzz tests of tokbench's three readers of files people hand it: a run's JSON result (compare),
// a sweep's TOML matrix (sweep --matrix) and the SQLite result store (history, compare --store).
// Each starts from a real input (tests/fixtures/sweep/, and a store written by results::ResultStore from
// the real run), mutates it over 1,000+ seeded cases (bytes and structure), and calls the reader
// the way the CLI does in a forked child with a 10 s limit (fuzz_harness.hpp). A damaged input
// must be read or refused in one line naming it (exit 0 or 2), never a crash, a hang, another
// exception, or a byte written or a file created beside it.
#include <fmt/format.h>
#include <sqlite3.h>

#include "fuzz_harness.hpp"
#include "results/read_result.hpp"
#include "sweep/compare.hpp"
#include "sweep/matrix.hpp"
#include "results/result_store.hpp"
#include "results/tables.hpp"

#ifndef TOKBENCH_FIXTURES_DIR
#error "TOKBENCH_FIXTURES_DIR: the folder of tests/fixtures (set by tests/sweep/CMakeLists.txt)"
#endif

namespace tokbench::fuzz {
namespace {

const fs::path kFixtures = fs::path(TOKBENCH_FIXTURES_DIR) / "sweep";

struct Scratch {
  fs::path dir;
  explicit Scratch(const std::string& name)
      : dir(fs::temp_directory_path() / fmt::format("tokbench-fuzz-{}-{}", name, ::getpid())) {
    fs::remove_all(dir);
    fs::create_directories(dir);
  }
  ~Scratch() { fs::remove_all(dir); }
};

// A fresh case folder holding only the input.
void only_file(const fs::path& dir, const fs::path& input, const std::string& bytes) {
  for (const auto& entry : fs::directory_iterator(dir)) fs::remove_all(entry.path());
  write_bytes(input, bytes);
}

// --- The run JSON, read as `tokbench compare A.json B.json` reads it ------------------------

void read_like_compare(const fs::path& file) {
  const nlohmann::json run = results::read_run_result(file);
  std::ostringstream out;
  auto number = [](const std::optional<double>& v, const char* spec) {
    return v ? fmt::format(fmt::runtime(spec), *v) : std::string("N/A");
  };
  out << sweep::configuration_key(run) << '\n';
  for (const auto& c : sweep::compare_runs({run}, {run}, 0.05))
      out << fmt::format("{} {} {} {} {} {}\n", sweep::to_string(c.verdict), number(c.base_tokens_per_s, "{:.1f}"),
                         number(c.new_tokens_per_s, "{:.1f}"), number(c.time_ratio, "{:.3f}"),
                         c.ratio_low ? fmt::format("[{:.3f}, {:.3f}]", *c.ratio_low, *c.ratio_high) : "N/A",
                         c.configuration + c.note);
}

TEST(ReaderFuzz, RunJson) {
  Scratch s("run-json");
  // Two seeds: a run's result, and the row a sweep writes for a configuration that never ran.
  const std::array<std::string, 2> seed_texts{read_bytes(kFixtures / "run-pythia-14m.json"),
                                              read_bytes(kFixtures / "sweep-row-invalid.json")};
  const std::array<nlohmann::json, 2> seeds{nlohmann::json::parse(seed_texts[0]), nlohmann::json::parse(seed_texts[1])};
  const fs::path input = s.dir / "run.json";
  // The seeds themselves are read.
  for (const auto& text : seed_texts) {
    only_file(s.dir, input, text);
    ASSERT_NO_THROW(read_like_compare(input));
  }
  const int cases = case_count(1200);
  const auto summary = fuzz(
      "run-json", s.dir, input, cases,
      [&](Rng& rng, int i) {
        std::string how;
        const std::size_t seed = i % 5 == 4 ? 1 : 0;
        const std::string bytes =
            i % 3 == 0 ? mutate_bytes(rng, seed_texts[seed], how) : mutate_json(rng, seeds[seed], how);
        if (seed == 1) how = "the sweep's row: " + how;
        only_file(s.dir, input, bytes);
        return how;
      },
      [&] { read_like_compare(input); });
  expect_clean(summary, cases);
}

// --- The matrix, read as `tokbench sweep --matrix FILE --dry-run` reads it ------------------

void read_like_sweep(const fs::path& file) {
  std::vector<sweep::Matrix> matrices;
  try {
    matrices = sweep::sweep_matrices(file, {"--max-iters", "3"});  // the command's own assembly
  } catch (const std::invalid_argument& e) {
    if (std::string(e.what()).find(file.string()) == std::string::npos)
      throw std::logic_error(std::string("the matrix reader refused without naming the file: ") + e.what());
    throw;
  }
  const auto configs = sweep::expand_all(matrices);
  if (configs.empty()) throw std::invalid_argument("sweep: the matrix is empty");
  std::ostringstream out;
  for (std::size_t i = 0; i < configs.size(); ++i) {
    out << fmt::format("{:>4}  {}  {}\n", i + 1, configs[i].id, configs[i].describe());
    for (const auto& a : configs[i].run_arguments()) out << a << ' ';
  }
}

TEST(ReaderFuzz, MatrixToml) {
  Scratch s("matrix");
  const std::string seed = read_bytes(kFixtures / "matrix.toml");
  const fs::path input = s.dir / "matrix.toml";
  only_file(s.dir, input, seed);
  ASSERT_NO_THROW(read_like_sweep(input));
  EXPECT_EQ(sweep::expand_all(sweep::matrices_from_toml(input)).size(), 38u);
  const int cases = case_count(1200);
  const auto summary = fuzz(
      "matrix", s.dir, input, cases,
      [&](Rng& rng, int i) {
        std::string how;
        std::string bytes = i % 4 == 0 ? mutate_bytes(rng, seed, how) : mutate_toml(rng, seed, how);
        if (i % 9 == 1) {  // two mutations on top of each other
          std::string more;
          bytes = mutate_toml(rng, bytes, more);
          how += ", then " + more;
        }
        only_file(s.dir, input, bytes);
        return how;
      },
      // The expansion's own refusals (too many configurations, an empty matrix) are the sweep's
      // words about the matrix, not about the file; the file's are checked in read_like_sweep.
      [&] { read_like_sweep(input); }, /*refusal_names_input=*/false);
  expect_clean(summary, cases);
}

// Found by the fuzz test (TOKBENCH_FUZZ_SEED=99, cases 559 and 1441): many [[matrix]] tables over
// long top-level axes were each copied with those axes until memory ran out (std::bad_alloc,
// exit 1). Kept as fixed cases, since the default seed does not reach them.
TEST(ReaderFuzz, MatrixTablesOverLongAxesAreRefusedBeforeTheyAreCopied) {
  Scratch s("matrix-copies");
  const fs::path input = s.dir / "matrix.toml";
  auto axis = [](const std::string& name, int n) {
    std::string text = name + " = [";
    for (int v = 0; v < n; ++v) text += (v ? ", " : "") + std::to_string(v);
    return text + "]\n";
  };
  auto tables = [](int n) {
    std::string text;
    for (int t = 0; t < n; ++t) text += "[[matrix]]\nseq-len = [" + std::to_string(t) + ", 1]\n";
    return text;
  };
  for (const std::string& text : {axis("a", 10001) + tables(20000),
                                  axis("a", 10001) + axis("b", 10001) + axis("c", 10001) + tables(3000)}) {
    only_file(s.dir, input, text);
    const Ending e = run_forked([&] { read_like_sweep(input); }, std::chrono::seconds(10));
    EXPECT_EQ(e.exit_code, 2) << describe(e);
    EXPECT_NE(e.message.find(input.string()), std::string::npos) << e.message;
  }
}

// --- The store, read as `tokbench history` and `tokbench compare N M --store` read it -------

void read_like_history(const fs::path& file, int variant) {
  const auto store = results::ResultStore::open_for_reading(file);
  std::ostringstream out;
  std::vector<int64_t> ids;
  out << fmt::format("# {:>4}  {:<20}  {:>5}  {}\n", "id", "created", "runs", "out_dir");
  store->for_each_sweep([&](const results::StoredSweep& s) {
    out << fmt::format("  {:>4}  {:<20}  {:>5}  {}\n", s.id, s.created, s.runs, s.out_dir);
    ids.push_back(s.id);
  });
  static const std::array<const char*, 4> formats{"print", "csv", "json", "markdown"};
  const results::ReporterPlugin& format = results::format_from_string(formats[static_cast<std::size_t>(variant) % 4]);
  auto report = [&](int64_t sweep, const std::string& filter) {
    const auto runs = store->runs(sweep, filter);
    const nlohmann::json context{{"store", file.string()}, {"sweep", sweep}, {"filter", filter}, {"runs", runs.size()}};
    results::write_report(format, context, runs, {}, out, {});
    return runs;
  };
  report(0, "");
  report(0, "ok");
  std::vector<std::vector<nlohmann::json>> sides;
  for (const int64_t id : ids) sides.push_back(report(id, ""));
  if (sides.size() >= 2 && !sides[0].empty() && !sides[1].empty()) {
    try {
      for (const auto& c : sweep::compare_runs(sides[1], sides[0], 0.05))
        out << sweep::to_string(c.verdict) << c.configuration << c.note << '\n';
    } catch (const std::invalid_argument&) {
      // compare's own refusal of what the runs say (two runs of one configuration on a side):
      // a verdict on the content, made after the store was read.
    }
  }
}

void sql(const fs::path& path, const std::string& statements) {
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE, nullptr) != SQLITE_OK) {
    sqlite3_close(db);
    return;  // a file a byte mutation already broke: nothing to run
  }
  // No fsync: the case's file only has to exist until the case ends.
  sqlite3_exec(db, ("PRAGMA synchronous = OFF; " + statements).c_str(), nullptr, nullptr, nullptr);  // may fail: fine
  sqlite3_close(db);
}

// A store written the way a sweep writes one: two sweeps of the real run (one with a
// configuration that never ran, as the sweep synthesizes it).
std::string seed_store(const fs::path& dir) {
  const nlohmann::json run = nlohmann::json::parse(read_bytes(kFixtures / "run-pythia-14m.json"));
  auto row = [&](const std::string& id, int64_t seq_len, const std::string& compiler) {
    nlohmann::json r = run;
    r["Seq Len"] = seq_len;
    r["compiler"] = compiler;
    r["sweep_config_id"] = id;
    r["sweep_options"] = {{"model-name", "pythia-14m"}, {"seq-len", std::to_string(seq_len)}};
    return r;
  };
  const nlohmann::json invalid = {{"average_iter_time", nullptr}, {"tokens_per_sec", nullptr},
                                  {"memory_used_GB", nullptr},    {"model_name", "pythia-14m"},
                                  {"Num GPUS", 2},                {"Seq Len", 32},
                                  {"Micro BS", 1},                {"Global BS", 3},
                                  {"GA", nullptr},                {"Distributed Mode", "ddp"},
                                  {"Sharding Size", nullptr},     {"compiler", "eager"},
                                  {"status", "invalid"},          {"message", "--global-batch-size 3 ..."},
                                  {"sweep_config_id", "00000000000000ff"}};
  const fs::path store_path = dir / "store.sqlite";
  {
    results::ResultStore store(store_path);
    const nlohmann::json context{{"matrix", {{"seq-len", {"64", "128"}}}}, {"tokbench_version", "0.1.0"}};
    store.save_sweep(dir / "sweep-a", context, {row("a1", 64, "eager"), row("a2", 128, "eager"), invalid});
    store.save_sweep(dir / "sweep-b", context, {row("b1", 64, "eager"), row("b2", 128, "torch.compile")});
  }
  return read_bytes(store_path);
}

std::string sql_quote(const std::string& text) {
  std::string q = "'";
  for (const char c : text) q += c == '\'' ? std::string("''") : std::string(1, c);
  return q + "'";
}

// A mutation through SQLite itself: the store stays a valid SQLite file whose content is not
// what tokbench wrote (tables dropped or renamed, rows of the wrong type, a damaged schema).
std::string mutate_with_sqlite(Rng& rng, const fs::path& file, const nlohmann::json& run) {
  std::string how;
  const std::string mutated_run = mutate_json(rng, run, how);
  const std::array<std::pair<std::string, std::string>, 32> statements{{
      {"DROP TABLE runs", "runs dropped"},
      {"DROP TABLE sweeps", "sweeps dropped"},
      {"DROP TABLE iterations", "iterations dropped"},
      {"DROP TABLE runs; DROP TABLE sweeps; DROP TABLE iterations", "every table dropped"},
      {"ALTER TABLE runs DROP COLUMN result", "runs.result dropped"},
      {"ALTER TABLE runs DROP COLUMN model_name", "runs.model_name dropped"},
      {"ALTER TABLE sweeps RENAME COLUMN out_dir TO place", "sweeps.out_dir renamed"},
      {"ALTER TABLE runs RENAME TO old_runs", "runs renamed"},
      {"DROP TABLE runs; CREATE VIEW runs AS SELECT 1 AS id", "runs replaced by a view"},
      {"CREATE TABLE notes(x); INSERT INTO notes VALUES (1)", "a table of another program added"},
      {"UPDATE runs SET result = " + sql_quote(mutated_run), "every run's result: " + how},
      {"UPDATE runs SET result = " + sql_quote(mutated_run) + " WHERE id = 1", "run 1's result: " + how},
      {"UPDATE runs SET result = X'FF00FE41'", "results set to a blob with a NUL"},
      {"UPDATE runs SET result = 42", "results set to a number"},
      {"UPDATE runs SET result = '[]'", "results set to an array"},
      {"UPDATE runs SET result = '" + std::string(100000, '[') + std::string(100000, ']') + "'",
       "results nested 100000 deep"},
      {"UPDATE sweeps SET created = X'00FF', out_dir = 12345", "sweep columns set to a blob and a number"},
      {"UPDATE sweeps SET created = 1e308", "sweeps.created set to a huge number"},
      {"UPDATE sweeps SET id = 9223372036854775807 WHERE id = 1", "sweep id set to INT64_MAX"},
      {"UPDATE runs SET sweep_id = 'abc'", "runs.sweep_id set to text"},
      {"UPDATE runs SET sweep_id = -5", "runs point to no sweep"},
      {"UPDATE runs SET model_name = X'00', status = 3.5, device_name = NULL", "filter columns of other types"},
      {"DELETE FROM sweeps", "every sweep row deleted (runs kept)"},
      {"INSERT INTO runs(sweep_id, config_id, result) SELECT sweep_id, config_id || 'x', result FROM runs",
       "runs duplicated"},
      {"PRAGMA user_version = " + std::to_string(static_cast<int64_t>(rng())), "user_version set"},
      {"PRAGMA application_id = " + std::to_string(static_cast<int32_t>(rng())), "application_id set"},
      {"PRAGMA application_id = 0; PRAGMA user_version = 0", "the mark removed (an older store)"},
      {"PRAGMA journal_mode = WAL", "switched to WAL (as older tokbench wrote)"},
      {"PRAGMA writable_schema = ON; UPDATE sqlite_master SET sql = 'CREATE TABLE runs(x)' WHERE name = 'runs'",
       "runs' schema text rewritten"},
      {"PRAGMA writable_schema = ON; UPDATE sqlite_master SET sql = 'garbage' WHERE name = 'sweeps'",
       "sweeps' schema text made garbage"},
      {"PRAGMA writable_schema = ON; UPDATE sqlite_master SET rootpage = 1 WHERE name = 'runs'",
       "runs' root page pointed at the schema"},
      {"PRAGMA page_size = 512; VACUUM", "rewritten with 512-byte pages"},
  }};
  const auto& [statement, what] = statements[below(rng, statements.size())];
  sql(file, statement);
  return what;
}

// A writer killed in the middle of its work, leaving files beside the store: a sweep of this
// tokbench killed inside a save (a hot -journal, the store's pages half written), or an older
// tokbench's WAL writer killed before its checkpoint (-wal and -shm). Done in a child that
// _exits with the transaction open, as SIGKILL would leave it.
std::string kill_writer_midway(Rng& rng, const fs::path& file) {
  const int kind = static_cast<int>(below(rng, 3));
  const pid_t pid = fork();
  if (pid == 0) {
    sqlite3* db = nullptr;
    sqlite3_open_v2(file.c_str(), &db, SQLITE_OPEN_READWRITE, nullptr);
    if (kind == 0) {  // pages spilled into the store before the commit that never came
      sqlite3_exec(db, "PRAGMA cache_size = 1; BEGIN IMMEDIATE; UPDATE runs SET result = result || ' '; "
                       "DELETE FROM iterations;", nullptr, nullptr, nullptr);
    } else {
      sqlite3_exec(db, "PRAGMA journal_mode = WAL; UPDATE runs SET status = 'wal';", nullptr, nullptr, nullptr);
    }
    _exit(0);
  }
  waitpid(pid, nullptr, 0);
  if (kind == 2) fs::remove(file.string() + "-shm");
  return kind == 0 ? "a writer killed inside a save (hot -journal)"
                   : kind == 1 ? "an older WAL writer killed before its checkpoint (-wal, -shm)"
                               : "a -wal left without its -shm";
}

// A mutation of the file's pages: SQLite's header fields, a page's header and cells, whole pages.
std::string mutate_pages(Rng& rng, std::string& b) {
  std::string how;
  if (b.size() < 100) {
    b = mutate_bytes(rng, b, how);
    return how;
  }
  const std::size_t raw = (static_cast<unsigned char>(b[16]) << 8) | static_cast<unsigned char>(b[17]);
  const std::size_t page = raw == 1 ? 65536 : (raw >= 512 ? raw : 4096);
  const std::size_t pages = std::max<std::size_t>(1, b.size() / page);
  switch (below(rng, 5)) {
    case 0: {  // a header field: sizes, versions, counts, cookies, encoding, the mark
      static constexpr std::array<std::size_t, 26> fields{16, 17, 18, 19, 20, 21, 22, 23, 27, 28, 31, 32, 35,
                                                          36, 39, 43, 44, 47, 48, 52, 56, 59, 63, 68, 71, 95};
      static constexpr std::array<unsigned char, 9> values{0, 1, 2, 3, 0x7f, 0x80, 0xff, 0x10, 0x40};
      const std::size_t at = one_of(rng, fields);
      b[at] = static_cast<char>(below(rng, 2) ? one_of(rng, values) : below(rng, 256));
      return "header byte " + std::to_string(at) + " set to " + std::to_string(static_cast<unsigned char>(b[at]));
    }
    case 1: {  // a b-tree page's header: its type, cell count, cell pointers
      const std::size_t p = below(rng, pages), base = p * page + (p == 0 ? 100 : 0);
      const std::size_t at = std::min(b.size() - 1, base + below(rng, 16));
      b[at] = static_cast<char>(below(rng, 256));
      return "page " + std::to_string(p + 1) + "'s header byte " + std::to_string(at - base) + " randomised";
    }
    case 2: {  // a page of zeros or random bytes
      const std::size_t p = below(rng, pages);
      const bool zero = below(rng, 2);
      for (std::size_t i = p * page; i < std::min(b.size(), (p + 1) * page); ++i)
        b[i] = zero ? '\0' : static_cast<char>(below(rng, 256));
      return "page " + std::to_string(p + 1) + (zero ? " zeroed" : " randomised");
    }
    case 3: {  // one page copied over another (a misdirected write)
      const std::size_t from = below(rng, pages), to = below(rng, pages);
      b.replace(to * page, page, b.substr(from * page, page));
      return "page " + std::to_string(from + 1) + " copied over page " + std::to_string(to + 1);
    }
    default: {  // a few bytes inside one page's cells
      const std::size_t p = below(rng, pages);
      for (int k = 0; k < 4; ++k) b[std::min(b.size() - 1, p * page + below(rng, page))] = static_cast<char>(below(rng, 256));
      return "4 bytes in page " + std::to_string(p + 1) + " randomised";
    }
  }
}

TEST(ReaderFuzz, ResultStore) {
  Scratch s("store");
  const fs::path seed_dir = s.dir / "seed", dir = s.dir / "case";
  fs::create_directories(seed_dir);
  fs::create_directories(dir);
  const std::string seed = seed_store(seed_dir);
  ASSERT_EQ(snapshot(seed_dir).size(), 1u) << "the writer left a file beside the store";
  const nlohmann::json run = nlohmann::json::parse(read_bytes(kFixtures / "run-pythia-14m.json"));
  const fs::path input = dir / "store.sqlite";
  only_file(dir, input, seed);
  for (int variant = 0; variant < 4; ++variant) ASSERT_NO_THROW(read_like_history(input, variant));
  EXPECT_EQ(results::ResultStore::open_for_reading(input)->runs(0, "").size(), 5u);
  const int cases = case_count(1200);
  int variant = 0;
  const auto summary = fuzz(
      "store", dir, input, cases,
      [&](Rng& rng, int i) {
        variant = i;
        only_file(dir, input, seed);
        std::string how;
        switch (i % 4) {
          case 0:
            how = i % 20 == 0 ? kill_writer_midway(rng, input) : mutate_with_sqlite(rng, input, run);
            break;
          case 1: {
            std::string bytes = seed;
            how = mutate_pages(rng, bytes);
            write_bytes(input, bytes);
            break;
          }
          case 2: write_bytes(input, mutate_bytes(rng, seed, how)); break;
          default:  // both: content changed through SQLite, then its pages damaged
            how = mutate_with_sqlite(rng, input, run);
            std::string bytes = read_bytes(input), more;
            if (below(rng, 2)) {
              more = mutate_pages(rng, bytes);
            } else {
              bytes = mutate_bytes(rng, bytes, more);
            }
            write_bytes(input, bytes);
            how += ", then " + more;
        }
        // What SQLite left beside a mutated store (none expected) is part of the input.
        return how;
      },
      [&] { read_like_history(input, variant); });
  expect_clean(summary, cases);
}

}  // namespace
}  // namespace tokbench::fuzz
