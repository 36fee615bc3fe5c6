// Several processes writing one result store at once, as sweeps with different output folders
// and one --store do: every sweep and every run each of them saved is there afterwards with its
// contents, a resumed sweep's rows are updated rather than added, readers (history) running
// meanwhile always see whole saves, and no file is left beside the store. A writer killed inside
// a save loses that save alone: readers refuse the store in one line until the next writer rolls
// the save back.
#include <fmt/format.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "results/result_store.hpp"

#ifndef TOKBENCH_FIXTURES_DIR
#error "TOKBENCH_FIXTURES_DIR: the folder of tests/fixtures (set by tests/sweep/CMakeLists.txt)"
#endif

namespace tokbench::sweep {
namespace {

namespace fs = std::filesystem;

struct Scratch {
  fs::path dir = fs::temp_directory_path() / ("tokbench-store-writers-" + std::to_string(::getpid()));
  Scratch() {
    fs::remove_all(dir);
    fs::create_directories(dir);
  }
  ~Scratch() { fs::remove_all(dir); }
};

nlohmann::json real_run() {
  std::ifstream in(fs::path(TOKBENCH_FIXTURES_DIR) / "sweep" / "run-pythia-14m.json");
  std::stringstream text;
  text << in.rdbuf();
  return nlohmann::json::parse(text.str());
}

// Run r of sweep s of writer w: the real run with figures that say whose it is.
nlohmann::json run_of(const nlohmann::json& run, int w, int s, int r, int pass) {
  nlohmann::json j = run;
  j["sweep_config_id"] = fmt::format("w{}s{}r{}", w, s, r);
  j["Seq Len"] = 32 * (r + 1);
  j["tokens_per_sec"] = w * 100000 + s * 100 + r + pass * 0.5;
  return j;
}

// Waits for `pid` at most `seconds`; kills it past that. "" when it exited 0, else what happened.
std::string wait_for(pid_t pid, int seconds) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  int status = 0;
  while (waitpid(pid, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      return "hung (killed)";
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  if (WIFSIGNALED(status)) return "killed by signal " + std::to_string(WTERMSIG(status));
  return WEXITSTATUS(status) == 0 ? "" : "exit " + std::to_string(WEXITSTATUS(status));
}

// Runs `body` in a forked child that first waits for the pipe `go` to close (the parent's
// write end: the child closes its own copy), so that every child starts at once; the child's
// exception text goes to stderr and makes exit 1.
template <typename F>
pid_t start_child(const int (&go)[2], F&& body) {
  std::fflush(nullptr);
  const pid_t pid = fork();
  if (pid != 0) return pid;
  close(go[1]);
  char byte;
  while (read(go[0], &byte, 1) > 0) {
  }
  try {
    body();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "child %d: %s\n", getpid(), e.what());
    _exit(1);
  }
  _exit(0);
}

TEST(StoreWriters, FourProcessesSavingAtOnceKeepEveryRow) {
  constexpr int kWriters = 4, kSweeps = 50, kRuns = 4;
  Scratch s;
  const fs::path store_path = s.dir / "store.sqlite";  // created by the writers themselves, at once
  const nlohmann::json run = real_run();
  const std::size_t iterations_per_run = run["iterations"].size();
  int go[2];
  ASSERT_EQ(pipe(go), 0);
  std::vector<pid_t> writers;
  const auto start = std::chrono::steady_clock::now();
  for (int w = 0; w < kWriters; ++w) {
    writers.push_back(start_child(go, [&, w] {
      // Each sweep opens the store and saves once, as `tokbench sweep` does; the last pass
      // saves sweep 0 again, as a resumed sweep does, with new figures.
      for (int sweep = 0; sweep <= kSweeps; ++sweep) {
        const int pass = sweep == kSweeps ? 1 : 0;
        const int id = sweep % kSweeps;
        std::vector<nlohmann::json> runs;
        for (int r = 0; r < kRuns; ++r) runs.push_back(run_of(run, w, id, r, pass));
        results::ResultStore store(store_path);
        store.save_sweep(s.dir / fmt::format("writer-{}", w) / fmt::format("sweep-{}", id),
                         {{"writer", w}, {"sweep", id}}, runs);
      }
    }));
  }
  // A reader, as `tokbench history` run meanwhile: it sees whole saves only (every sweep it
  // lists has all its runs), and never fails.
  const pid_t reader = start_child(go, [&] {
    int reads = 0;
    for (auto until = std::chrono::steady_clock::now() + std::chrono::seconds(3); std::chrono::steady_clock::now() < until;) {
      std::error_code ec;
      if (!fs::exists(store_path, ec) || fs::file_size(store_path, ec) == 0) continue;
      try {
        const auto store = results::ResultStore::open_for_reading(store_path);
        store->for_each_sweep([&](const results::StoredSweep& sweep) {
          if (sweep.runs != kRuns) throw std::runtime_error(fmt::format("sweep {} seen with {} runs", sweep.id, sweep.runs));
        });
        ++reads;
      } catch (const std::invalid_argument& e) {
        // Only before the first writer's layout is committed is the file not yet a store.
        if (std::string(e.what()).find("without tokbench's tables") == std::string::npos) throw;
      }
    }
    if (reads == 0) throw std::runtime_error("the reader never read the store");
  });
  close(go[0]);
  close(go[1]);  // go
  // One deadline for all: a stuck writer fails the test in minutes, not minutes per writer.
  for (const pid_t pid : writers) EXPECT_EQ(wait_for(pid, 120), "") << "a writer";
  EXPECT_EQ(wait_for(reader, 10), "") << "the reader";
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  const auto store = results::ResultStore::open_for_reading(store_path);
  const auto sweeps = store->sweeps();
  EXPECT_EQ(sweeps.size(), static_cast<std::size_t>(kWriters * kSweeps));
  std::map<std::string, int64_t> by_dir;
  for (const auto& sweep : sweeps) {
    EXPECT_EQ(sweep.runs, kRuns) << sweep.out_dir;
    by_dir[sweep.out_dir] = sweep.id;
  }
  std::size_t rows = 0;
  for (int w = 0; w < kWriters; ++w) {
    for (int id = 0; id < kSweeps; ++id) {
      const std::string dir = fs::weakly_canonical(s.dir / fmt::format("writer-{}", w) / fmt::format("sweep-{}", id));
      ASSERT_TRUE(by_dir.count(dir)) << dir;
      const auto runs = store->runs(by_dir[dir], "");
      ASSERT_EQ(runs.size(), static_cast<std::size_t>(kRuns)) << dir;
      for (int r = 0; r < kRuns; ++r) {
        const int pass = id == 0 ? 1 : 0;  // sweep 0 was saved again: its rows replaced
        EXPECT_EQ(runs[r]["sweep_config_id"], fmt::format("w{}s{}r{}", w, id, r));
        EXPECT_EQ(runs[r]["Seq Len"], 32 * (r + 1));
        EXPECT_EQ(runs[r]["tokens_per_sec"], w * 100000 + id * 100 + r + pass * 0.5) << dir;
        EXPECT_EQ(runs[r]["iterations"], run["iterations"]);
        ++rows;
      }
    }
  }
  // The per-iteration table: every run's iterations once (the resaved sweep's replaced).
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open_v2(store_path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  sqlite3_stmt* count = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db, "SELECT (SELECT COUNT(*) FROM runs), (SELECT COUNT(*) FROM iterations)", -1, &count,
                               nullptr),
            SQLITE_OK);
  ASSERT_EQ(sqlite3_step(count), SQLITE_ROW);
  const int64_t run_rows = sqlite3_column_int64(count, 0), iteration_rows = sqlite3_column_int64(count, 1);
  sqlite3_finalize(count);
  sqlite3_close(db);
  EXPECT_EQ(run_rows, kWriters * kSweeps * kRuns);
  EXPECT_EQ(iteration_rows, static_cast<int64_t>(kWriters * kSweeps * kRuns * iterations_per_run));
  std::vector<std::string> files;
  for (const auto& entry : fs::directory_iterator(s.dir))
    if (entry.is_regular_file()) files.push_back(entry.path().filename().string());
  EXPECT_EQ(files, std::vector<std::string>{"store.sqlite"}) << "a file left beside the store";
  std::cout << fmt::format("[ writers  ] {} processes x {} saves ({} runs each, one resave) in {:.1f} s: {} sweeps, "
                           "{} runs, {} iteration rows\n",
                           kWriters, kSweeps + 1, kRuns, seconds, sweeps.size(), run_rows, iteration_rows);
  EXPECT_EQ(rows, static_cast<std::size_t>(kWriters * kSweeps * kRuns));
}

TEST(StoreWriters, AWriterKilledInsideASaveLosesOnlyThatSave) {
  Scratch s;
  const fs::path store_path = s.dir / "store.sqlite";
  const nlohmann::json run = real_run();
  {
    results::ResultStore store(store_path);
    store.save_sweep(s.dir / "kept", {}, {run_of(run, 0, 0, 0, 0), run_of(run, 0, 0, 1, 0)});
  }
  // A save that never commits: its pages spilled into the store (a cache of one page), then
  // the process gone as SIGKILL leaves it.
  const pid_t pid = fork();
  if (pid == 0) {
    sqlite3* db = nullptr;
    sqlite3_open_v2(store_path.c_str(), &db, SQLITE_OPEN_READWRITE, nullptr);
    sqlite3_exec(db, "PRAGMA cache_size = 1; BEGIN IMMEDIATE; DELETE FROM iterations; UPDATE runs SET status = 'lost'",
                 nullptr, nullptr, nullptr);
    _exit(0);
  }
  ASSERT_EQ(wait_for(pid, 30), "");
  ASSERT_TRUE(fs::exists(store_path.string() + "-journal"));
  try {
    results::ResultStore::open_for_reading(store_path);
    ADD_FAILURE() << "a store with a save half done was read";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("-journal"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(store_path.string()), std::string::npos) << e.what();
  }
  {
    results::ResultStore store(store_path);  // the next writer rolls the dead one's save back
    store.save_sweep(s.dir / "after", {}, {run_of(run, 1, 0, 0, 0)});
  }
  EXPECT_FALSE(fs::exists(store_path.string() + "-journal"));
  const auto store = results::ResultStore::open_for_reading(store_path);
  const auto runs = store->runs(0, "");
  ASSERT_EQ(runs.size(), 3u);
  for (const auto& r : runs) {
    EXPECT_EQ(r["status"], "ok");
    EXPECT_EQ(r["iterations"], run["iterations"]);
  }
}

TEST(StoreWriters, AStoreAnOlderTokbenchLeftInWalModeIsReadAndReturnedToTheJournal) {
  Scratch s;
  const fs::path store_path = s.dir / "store.sqlite";
  {
    results::ResultStore store(store_path);
    store.save_sweep(s.dir / "old", {}, {run_of(real_run(), 0, 0, 0, 0)});
  }
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(store_path.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "PRAGMA journal_mode = WAL", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(db);  // as the older tokbench closed it: no -wal, no -shm; the header says WAL
  auto only_the_store = [&] {
    std::vector<std::string> files;
    for (const auto& entry : fs::directory_iterator(s.dir))
      if (entry.is_regular_file()) files.push_back(entry.path().filename().string());
    return files == std::vector<std::string>{"store.sqlite"};
  };
  ASSERT_TRUE(only_the_store());
  EXPECT_EQ(results::ResultStore::open_for_reading(store_path)->runs(0, "").size(), 1u);
  EXPECT_TRUE(only_the_store()) << "reading a WAL store created files beside it";
  { results::ResultStore writer(store_path); }
  std::ifstream in(store_path, std::ios::binary);
  char header[20];
  in.read(header, sizeof header);
  EXPECT_EQ(header[18], 1) << "still in WAL mode after a writer opened it";
  EXPECT_TRUE(only_the_store());
}

// A sweep's row for a run that died carries the last line of its log as the message, whatever
// bytes that line holds: the save keeps the row (bytes that are not UTF-8 become U+FFFD)
// instead of failing the whole sweep's save.
TEST(StoreWriters, ARowWhoseMessageIsNotUtf8IsSaved) {
  Scratch s;
  const fs::path store_path = s.dir / "store.sqlite";
  nlohmann::json row = {{"model_name", "pythia-14m"}, {"status", "error"}, {"sweep_config_id", "dead"},
                        {"message", std::string("exit 1 without a result: \xff\xfe garbage")}};
  {
    results::ResultStore store(store_path);
    EXPECT_NO_THROW(store.save_sweep(s.dir / "sweep", {{"note", std::string("\xc3")}}, {row}));
  }
  const auto runs = results::ResultStore::open_for_reading(store_path)->runs(0, "");
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0]["status"], "error");
  EXPECT_NE(runs[0]["message"].get<std::string>().find("\xef\xbf\xbd"), std::string::npos);  // U+FFFD
}

// `tokbench history`'s listing steps through the sweeps and counts runs from the index: it
// reads no run's document, so a store whose every result is unreadable still lists, while the
// runs themselves are refused in one line.
TEST(StoreListing, ListsSweepsRowByRowWithoutReadingARun) {
  constexpr int kSweeps = 120;
  Scratch s;
  const fs::path store_path = s.dir / "store.sqlite";
  const nlohmann::json run = real_run();
  {
    results::ResultStore store(store_path);
    for (int i = 0; i < kSweeps; ++i)
      store.save_sweep(s.dir / fmt::format("sweep-{}", i), {}, {run_of(run, 0, i, 0, 0), run_of(run, 0, i, 1, 0)});
  }
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(store_path.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "UPDATE runs SET result = 'not a document'", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(db);
  const auto store = results::ResultStore::open_for_reading(store_path);
  int64_t previous = INT64_MAX;
  int listed = 0;
  store->for_each_sweep([&](const results::StoredSweep& sweep) {
    EXPECT_LT(sweep.id, previous) << "newest first";
    EXPECT_EQ(sweep.runs, 2);
    previous = sweep.id;
    ++listed;
  });
  EXPECT_EQ(listed, kSweeps);
  try {
    store->runs(0, "");
    ADD_FAILURE() << "unreadable run documents were read";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("is not a readable tokbench result store: run "), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace tokbench::sweep
