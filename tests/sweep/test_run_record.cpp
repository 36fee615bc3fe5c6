// The run record type (results/run_record.hpp): its members are the column table's keys in the
// table's order, its JSON keeps absent apart from null and a whole number apart from a real one,
// its reader refuses a value of the wrong type naming the key, keeps a key it does not know aside
// (extra), and reads every record tokbench recorded in tests/fixtures.
#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include "results/result_columns.hpp"
#include "results/run_record.hpp"

namespace tokbench::results {
namespace {

TEST(RunRecord, MembersAreTheColumnTableInItsOrder) {
  std::vector<std::string> members;
  RunRecord record;
  for_each_field(record, [&](const char* key, auto&) { members.emplace_back(key); });
  std::vector<std::string> columns;
  for (const auto& c : result_columns()) columns.push_back(c.key);
  EXPECT_EQ(members, columns);
}

TEST(RunRecord, MemberTypesMatchTheColumnKinds) {
  RunRecord record;
  for_each_field(record, [&](const char* key, auto& field) {
    using T = std::remove_cvref_t<decltype(*field.value())>;
    const Kind kind = find_column(key)->kind;
    if constexpr (std::is_same_v<T, std::string>) {
      EXPECT_EQ(kind, Kind::text) << key;
    } else if constexpr (std::is_same_v<T, bool>) {
      EXPECT_EQ(kind, Kind::flag) << key;
    } else if constexpr (std::is_same_v<T, double> || std::is_same_v<T, Number> || std::is_same_v<T, Given>) {
      EXPECT_EQ(kind, Kind::number) << key;
    }
  });
}

TEST(RunRecord, AbsentKeysAreLeftOutAndNullsWritten) {
  RunRecord r;
  r.status = "invalid";
  r.seq_len = nullptr;
  r.average_iter_time = std::optional<double>();
  const auto j = to_json(r);
  EXPECT_EQ(j.dump(), R"({"average_iter_time":null,"Seq Len":null,"status":"invalid"})");
}

TEST(RunRecord, NumbersKeepTheirType) {
  RunRecord r;
  r.model_flops = std::int64_t{1000};
  r.hardware_flops = 1000.0;
  r.seq_len = std::string("abc");
  r.micro_bs = std::int64_t{4};
  r.mfu = 0.5;
  r.num_gpus = 2;
  EXPECT_EQ(to_json(r).dump(),
            R"({"model_flops":1000,"Num GPUS":2,"Seq Len":"abc","Micro BS":4,"mfu":0.5,"hardware_flops":1000.0})");
}

TEST(RunRecord, RoundTripsThroughItsJson) {
  RunRecord r;
  r.average_iter_time = 12.5;
  r.model_flops = 123.0;
  r.model_name = "pythia-14m";
  r.seq_len = std::int64_t{128};
  r.sharding_size = nullptr;
  r.schema_version = kSchemaVersion;
  r.tf32 = false;
  r.config = Block{{"z", 1}, {"a", {1, 2}}};
  r.iterations = Block::array();
  r.sweep_id = 7;
  const auto j = to_json(r);
  EXPECT_EQ(to_json(record_from_json(j)).dump(), j.dump());
  // Unordered JSON (what the readers parse) reads the same values.
  EXPECT_EQ(to_json(record_from_json(nlohmann::json::parse(j.dump()))).dump(),
            to_json(record_from_json(nlohmann::ordered_json::parse(nlohmann::json::parse(j.dump()).dump()))).dump());
}

std::string refusal(const nlohmann::json& j) {
  try {
    record_from_json(j);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(RunRecord, ReaderNamesTheKeyItRefuses) {
  EXPECT_EQ(refusal({{"GA", "x"}}), "its key 'GA' holds a string; a run record has a whole number or null there");
  EXPECT_EQ(refusal({{"tf32", 1}}), "its key 'tf32' holds a whole number; a run record has true or false or null there");
  EXPECT_EQ(refusal({{"Seq Len", 1.5}}),
            "its key 'Seq Len' holds a number; a run record has a whole number or a string or null there");
  EXPECT_EQ(refusal({{"status", 3}}), "its key 'status' holds a whole number; a run record has a string or null there");
  EXPECT_EQ(refusal(nlohmann::json::array()), "it holds an array, not a record (an object)");
  EXPECT_EQ(refusal({{"GA", 4}, {"status", "ok"}}), "");
}

// A key the table does not know (a newer tokbench's, another tool's) is no reason to refuse a
// record: it is kept aside as it was, no member takes it, and the writer leaves it out.
TEST(RunRecord, UnknownKeysAreKeptAsideAndNotWritten) {
  const nlohmann::json j = {{"GA", 4}, {"tokens_per_second", "fast"}, {"future_block", {{"a", 1}}}};
  RunRecord r;
  ASSERT_NO_THROW(r = record_from_json(j));
  EXPECT_EQ(r.ga.value(), std::optional<std::int64_t>(4));
  EXPECT_EQ(r.extra, (Block{{"future_block", {{"a", 1}}}, {"tokens_per_second", "fast"}}));
  EXPECT_EQ(to_json(r).dump(), R"({"GA":4})");
  EXPECT_EQ(refusal({{"tokens_per_second", 1}, {"GA", 1.5}}),
            "its key 'GA' holds a number; a run record has a whole number or null there");
}

// A member addressed by its key (compare walks its keys from the option table): present as JSON,
// null as null, absent or unknown as nothing.
TEST(RunRecord, MemberByKey) {
  RunRecord r;
  r.seq_len = std::int64_t{64};
  r.tf32 = nullptr;
  EXPECT_EQ(member_json(r, key::seq_len), std::optional<nlohmann::json>(64));
  EXPECT_EQ(member_json(r, key::tf32), std::optional<nlohmann::json>(nullptr));
  EXPECT_FALSE(member_json(r, key::dtype).has_value());
  EXPECT_FALSE(member_json(r, "no such key").has_value());
}

nlohmann::ordered_json fixture(const std::string& name) {
  std::ifstream in(std::string(TOKBENCH_FIXTURES_DIR) + "/" + name);
  return nlohmann::ordered_json::parse(in);
}

// The results tokbench recorded (a run of schema 3, compare's three runs, a sweep's row for a
// configuration that never ran) read back whole: every key into its member, none left aside,
// and written again to the same JSON (values and order).
TEST(RunRecord, ReadsTheRecordedResults) {
  for (const char* name : {"sweep/run-pythia-14m.json", "sweep/sweep-row-invalid.json", "compare/run-1.json",
                           "compare/run-2.json", "compare/run-3.json"}) {
    const auto j = fixture(name);
    RunRecord r;
    ASSERT_NO_THROW(r = record_from_json(j)) << name;
    EXPECT_TRUE(r.extra.empty()) << name;
    EXPECT_EQ(nlohmann::json(to_json(r)), nlohmann::json(j)) << name;
  }
  const RunRecord run = record_from_json(fixture("sweep/run-pythia-14m.json"));
  EXPECT_EQ(run.schema_version.value(), std::optional<std::int64_t>(3));
  EXPECT_EQ(std::get<std::int64_t>(*run.seq_len.value()), 64);
  EXPECT_TRUE(run.iterations.value() && run.iterations.value()->is_array());
  const RunRecord row = record_from_json(fixture("sweep/sweep-row-invalid.json"));
  EXPECT_FALSE(row.schema_version.present());
  EXPECT_TRUE(row.ga.is_null());
}

// A schema 2 record (before executor, sharding_mode and bucketing, with a key since dropped)
// reads: the later keys are absent, the dropped one is kept aside.
TEST(RunRecord, ReadsAnOlderSchema) {
  auto j = fixture("sweep/run-pythia-14m.json");
  j[key::schema_version] = 2;
  for (const char* later : {key::executor, key::sharding_mode, key::bucketing}) j.erase(later);
  j["tokens_per_second_old"] = 1.0;
  RunRecord r;
  ASSERT_NO_THROW(r = record_from_json(j));
  EXPECT_FALSE(r.executor.present());
  EXPECT_FALSE(r.bucketing.present());
  EXPECT_EQ(r.schema_version.value(), std::optional<std::int64_t>(2));
  EXPECT_EQ(r.extra, (Block{{"tokens_per_second_old", 1.0}}));
}

}  // namespace
}  // namespace tokbench::results
