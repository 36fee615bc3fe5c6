// Readers refuse what is not theirs: a run result read back (results/read_result.hpp) and the
// result store (results/result_store.hpp), each given files built to be wrong: truncated JSON,
// another program's JSON, a newer schema; a text file, another program's SQLite database, a
// newer store. Every refusal is one line naming the file, and a refused file is never written.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "results/read_result.hpp"
#include "results/result_columns.hpp"
#include "results/result_store.hpp"

namespace tokbench::sweep {
namespace {

namespace fs = std::filesystem;

struct Scratch {
  fs::path dir = fs::temp_directory_path() / ("tokbench-readers-" + std::to_string(::getpid()));
  Scratch() { fs::create_directories(dir); }
  ~Scratch() { fs::remove_all(dir); }
  fs::path write(const std::string& name, const std::string& text) const {
    std::ofstream(dir / name, std::ios::binary) << text;
    return dir / name;
  }
};

std::string bytes_of(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The one line a refusal gives, or "" when nothing was refused.
template <typename F>
std::string refusal(F&& f) {
  try {
    f();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

void expect_one_line_naming(const std::string& message, const fs::path& file, const std::string& what) {
  EXPECT_NE(message.find(file.string()), std::string::npos) << message;
  EXPECT_NE(message.find(what), std::string::npos) << message;
  EXPECT_EQ(message.find('\n'), std::string::npos) << message;
}

TEST(ReadRunResult, RefusesWhatIsNotAResult) {
  Scratch s;
  const nlohmann::json good = {{"schema_version", results::kSchemaVersion}, {"status", "ok"}, {"model_name", "m"}};
  EXPECT_EQ(results::read_run_result(s.write("good.json", good.dump())), good);
  const std::string text = good.dump();
  const auto truncated = s.write("truncated.json", text.substr(0, text.size() / 2));
  expect_one_line_naming(refusal([&] { results::read_run_result(truncated); }), truncated, "truncated");
  const auto other = s.write("package.json", R"({"name": "left-pad", "version": "1.3.0"})");
  expect_one_line_naming(refusal([&] { results::read_run_result(other); }), other, "another program");
  const auto array = s.write("array.json", "[1, 2]");
  expect_one_line_naming(refusal([&] { results::read_run_result(array); }), array, "another program");
  auto future = good;
  future["schema_version"] = results::kSchemaVersion + 1;
  const auto newer = s.write("newer.json", future.dump());
  expect_one_line_naming(refusal([&] { results::read_run_result(newer); }), newer, "newer tokbench");
  const auto binary = s.write("binary.json", std::string("\x89PNG\r\n\x1a\n", 8));
  expect_one_line_naming(refusal([&] { results::read_run_result(binary); }), binary, "not JSON");
  expect_one_line_naming(refusal([&] { results::read_run_result(s.dir / "missing.json"); }), s.dir / "missing.json",
                         "cannot read");
}

// The typed record comes with the JSON: each key of the column table in its member, a key the
// table does not know (a newer tokbench's) kept aside, not refused; a key of the table holding
// another type is refused in one line naming the file and the key.
TEST(ReadRunResult, TypesTheRecordKeepsUnknownKeysAndNamesAWrongType) {
  Scratch s;
  nlohmann::json good = {{"schema_version", 2},  {"status", "ok"},          {"model_name", "m"},
                         {"Seq Len", 128},       {"average_iter_time", 12.5}, {"added_later", {{"x", 1}}}};
  const results::RunResult read = results::read_result(s.write("good.json", good.dump()));
  EXPECT_EQ(read.json, good);
  EXPECT_EQ(read.record.model_name.value(), std::optional<std::string>("m"));
  EXPECT_EQ(std::get<std::int64_t>(*read.record.seq_len.value()), 128);
  EXPECT_EQ(read.record.average_iter_time.value(), std::optional<double>(12.5));
  EXPECT_EQ(read.record.extra, (results::Block{{"added_later", {{"x", 1}}}}));
  good["mfu"] = "high";
  const auto wrong = s.write("wrong.json", good.dump());
  const std::string why = refusal([&] { results::read_result(wrong); });
  expect_one_line_naming(why, wrong, "its key 'mfu' holds a string; a run record has a number or null there");
  EXPECT_EQ(refusal([&] { results::read_run_result(wrong); }), why);
  EXPECT_NE(refusal([&] { results::parse_run_record(good.dump()); }).find("'mfu'"), std::string::npos);
}

void sqlite(const fs::path& path, const char* sql) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, sql, nullptr, nullptr, nullptr), SQLITE_OK) << sqlite3_errmsg(db);
  sqlite3_close(db);
}

TEST(ResultStoreFiles, RefusesWhatIsNotAStoreAndNeverWritesIt) {
  Scratch s;
  const auto text = s.write("notes.txt", "my notes, not a database\n");
  const auto other = s.dir / "other.sqlite";
  sqlite(other, "CREATE TABLE songs(title TEXT); INSERT INTO songs VALUES ('a');");
  const std::string text_bytes = bytes_of(text), other_bytes = bytes_of(other);
  for (const auto& [file, what] : {std::pair{text, std::string("not an SQLite database")},
                                   std::pair{other, std::string("other tables")}}) {
    expect_one_line_naming(refusal([&] { results::ResultStore store(file); }), file, what);
    expect_one_line_naming(refusal([&] { results::ResultStore::open_for_reading(file); }), file, what);
  }
  EXPECT_EQ(bytes_of(text), text_bytes);
  EXPECT_EQ(bytes_of(other), other_bytes);
  EXPECT_FALSE(fs::exists(other.string() + "-wal"));
  const auto marked = s.dir / "marked.sqlite";
  sqlite(marked, "PRAGMA application_id = 42; CREATE TABLE t(x);");
  expect_one_line_naming(refusal([&] { results::ResultStore store(marked); }), marked, "another program's");
  // A reader creates nothing.
  const auto missing = s.dir / "missing" / "store.sqlite";
  expect_one_line_naming(refusal([&] { results::ResultStore::open_for_reading(missing); }), missing, "no such file");
  EXPECT_FALSE(fs::exists(missing.parent_path()));
  // A folder is named as one, not as a missing file.
  expect_one_line_naming(refusal([&] { results::ResultStore::open_for_reading(s.dir); }), s.dir, "it is a directory");
}

TEST(ResultStoreFiles, AcceptsItsOwnAndRefusesANewerOne) {
  Scratch s;
  const auto path = s.dir / "store.sqlite";
  {
    results::ResultStore store(path);
    store.save_sweep(s.dir, nlohmann::json::object(), {});
  }
  EXPECT_EQ(results::ResultStore::open_for_reading(path)->sweeps().size(), 1u);
  // A store from before the mark (no application_id) is known by its tables.
  sqlite(path, "PRAGMA application_id = 0; PRAGMA user_version = 0;");
  EXPECT_EQ(results::ResultStore::open_for_reading(path)->sweeps().size(), 1u);
  { results::ResultStore again(path); }  // and marked as tokbench's when next written
  sqlite(path, "PRAGMA user_version = 99;");
  expect_one_line_naming(refusal([&] { results::ResultStore::open_for_reading(path); }), path, "newer tokbench");
}

}  // namespace
}  // namespace tokbench::sweep
