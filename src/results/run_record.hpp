// The run record as a type: what `tokbench run`, `tokbench predict` and a sweep's row for a
// configuration that never ran (invalid, error, timeout) build, and the one place that turns it
// into the JSON result (to_json) and back (record_from_json). Each member is one key of the
// column table (result_columns.hpp), in the table's order; a member may be absent (the record
// has no such key: a sweep's row holds 19), null (a figure the run could not give) or a value of
// its type. Torch-free.
#pragma once

#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>

#include "results/record_keys.hpp"

namespace tokbench::results {

// A FLOP count: a whole number where it was counted (tokbench run), a real one where it was
// derived from a record read back (tokbench predict). The JSON keeps which: 1000 or 1000.0.
using Number = std::variant<std::int64_t, double>;
// A count, or the text a sweep was given for it where that text is no count (its invalid row
// echoes the configuration's value as given).
using Given = std::variant<std::int64_t, std::string>;
// A structured block (config, ranks, the per-iteration records, the time account, ...), kept in
// the order its writer gave it.
using Block = nlohmann::ordered_json;

// One key's value: absent, null, or a value.
template <typename T>
class Field {
 public:
  Field() = default;                        // absent
  Field(std::nullptr_t) : present_(true) {} // null
  Field(std::optional<T> value) : present_(true), value_(std::move(value)) {}
  template <typename U, typename = std::enable_if_t<!std::is_same_v<std::decay_t<U>, std::nullptr_t> &&
                                                    !std::is_same_v<std::decay_t<U>, Field> &&
                                                    !std::is_same_v<std::decay_t<U>, std::optional<T>> &&
                                                    std::is_constructible_v<T, U&&>>>
  Field(U&& value) : present_(true), value_(T(std::forward<U>(value))) {}

  bool present() const { return present_; }
  bool is_null() const { return present_ && !value_; }
  const std::optional<T>& value() const { return value_; }
  template <typename U>
  T value_or(U&& fallback) const { return value_.value_or(std::forward<U>(fallback)); }

 private:
  bool present_ = false;
  std::optional<T> value_;
};

// One member per key of TOKBENCH_RUN_RECORD_FIELDS (record_keys.hpp), in its order.
struct RunRecord {
#define TOKBENCH_RECORD_MEMBER(member, text, type) Field<type> member;
  TOKBENCH_RUN_RECORD_FIELDS(TOKBENCH_RECORD_MEMBER)
#undef TOKBENCH_RECORD_MEMBER
  // Keys of a record read back that the column table does not know (a newer tokbench's, another
  // tool's annotations), as they were, so that reading a record never fails on a key added later.
  // No reader interprets them and to_json does not write them: a writer fills members only.
  Block extra = Block::object();
};

// Calls f(key, field) for each member of `record`, in the column table's order (the list of
// record_keys.hpp; to_json, record_from_json and the tests walk it).
template <typename Record, typename F>
void for_each_field(Record& r, F&& f) {
  static_assert(std::is_same_v<std::remove_const_t<Record>, RunRecord>);
#define TOKBENCH_RECORD_VISIT(member, text, type) f(key::member, r.member);
  TOKBENCH_RUN_RECORD_FIELDS(TOKBENCH_RECORD_VISIT)
#undef TOKBENCH_RECORD_VISIT
}

// The JSON result of `record`: its present members, in the column table's order (through
// in_column_order, so a key without a column is a std::logic_error). Numbers keep their type.
nlohmann::ordered_json to_json(const RunRecord& record);

// `json` (an object) as a record: each key of the column table read into its member, each other
// key kept in `extra`. Throws std::invalid_argument with one line naming the key that holds a
// value of the wrong type ("its key 'GA' holds a string; a run record has a whole number or null
// there"). It reads every schema tokbench has written (1 to kSchemaVersion): a key keeps its
// type across schemas, and a newer schema only adds keys.
RunRecord record_from_json(const nlohmann::ordered_json& json);
RunRecord record_from_json(const nlohmann::json& json);

// The member of `record` whose key is `key`, as JSON (null when it is null); nullopt when the
// record has no such member present (absent, or `key` is none of the table's). For code that
// walks keys from a table of its own (compare's key fields, from the option table) rather than
// naming a member.
std::optional<nlohmann::json> member_json(const RunRecord& record, std::string_view key);

// One key of a record read back (an object), as the member of type T reads it: absent, null or
// a value; std::invalid_argument as record_from_json's when it holds another type. For readers
// that take a few keys of a record they did not build (predict's measured run, compare).
// T: std::int64_t, double, bool, std::string, Number, Given or Block.
template <typename T>
Field<T> field_from_json(const nlohmann::json& json, const char* key);

}  // namespace tokbench::results
