// The run record type (results/run_record.hpp): its members are the column table's keys in the
// table's order, its JSON keeps absent apart from null and a whole number apart from a real one,
// and its reader refuses a key it does not know or a value of the wrong type, naming the key.
#include <gtest/gtest.h>

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
  EXPECT_EQ(refusal({{"tokens_per_second", 1}}), "its key 'tokens_per_second' is none of a run record's");
  EXPECT_EQ(refusal(nlohmann::json::array()), "it holds an array, not a record (an object)");
  EXPECT_EQ(refusal({{"GA", 4}, {"status", "ok"}}), "");
}

}  // namespace
}  // namespace tokbench::results
