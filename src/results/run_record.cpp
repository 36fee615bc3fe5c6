// The run record's one writer and one reader (run_record.hpp).
#include "results/run_record.hpp"

#include <fmt/format.h>

#include <stdexcept>

#include "results/result_columns.hpp"

namespace tokbench::results {
namespace {

template <typename Json>
Json value_json(const std::int64_t& v) { return Json(v); }
template <typename Json>
Json value_json(const double& v) { return Json(v); }
template <typename Json>
Json value_json(const bool& v) { return Json(v); }
template <typename Json>
Json value_json(const std::string& v) { return Json(v); }
template <typename Json>
Json value_json(const Block& v) { return Json(v); }
template <typename Json>
Json value_json(const Number& v) { return std::visit([](const auto& x) { return Json(x); }, v); }
template <typename Json>
Json value_json(const Given& v) { return std::visit([](const auto& x) { return Json(x); }, v); }

// What a key of type T holds, as the refusal says it.
template <typename T>
constexpr const char* expected() {
  if constexpr (std::is_same_v<T, std::int64_t>) return "a whole number";
  if constexpr (std::is_same_v<T, double> || std::is_same_v<T, Number>) return "a number";
  if constexpr (std::is_same_v<T, bool>) return "true or false";
  if constexpr (std::is_same_v<T, std::string>) return "a string";
  if constexpr (std::is_same_v<T, Given>) return "a whole number or a string";
  return "a value";
}

template <typename Json>
const char* type_word(const Json& v) {
  if (v.is_number_integer()) return "a whole number";
  if (v.is_number()) return "a number";
  if (v.is_string()) return "a string";
  if (v.is_boolean()) return "a boolean";
  if (v.is_object()) return "an object";
  if (v.is_array()) return "an array";
  return "something else";
}

// `v` as a T, or nullopt when it holds another type.
template <typename T, typename Json>
std::optional<T> value_of(const Json& v) {
  if constexpr (std::is_same_v<T, std::int64_t>) {
    if (v.is_number_integer() && (!v.is_number_unsigned() || v.template get<std::uint64_t>() <= INT64_MAX))
      return v.template get<std::int64_t>();
  } else if constexpr (std::is_same_v<T, double>) {
    if (v.is_number()) return v.template get<double>();
  } else if constexpr (std::is_same_v<T, bool>) {
    if (v.is_boolean()) return v.template get<bool>();
  } else if constexpr (std::is_same_v<T, std::string>) {
    if (v.is_string()) return v.template get<std::string>();
  } else if constexpr (std::is_same_v<T, Number>) {
    if (auto whole = value_of<std::int64_t>(v)) return Number(*whole);
    if (v.is_number()) return Number(v.template get<double>());
  } else if constexpr (std::is_same_v<T, Given>) {
    if (auto whole = value_of<std::int64_t>(v)) return Given(*whole);
    if (v.is_string()) return Given(v.template get<std::string>());
  } else {
    return Block(v);
  }
  return std::nullopt;
}

template <typename T, typename Json>
Field<T> read_field(const Json& json, const char* key) {
  auto it = json.find(key);
  if (it == json.end()) return {};
  if (it->is_null()) return nullptr;
  auto value = value_of<T>(*it);
  if (!value)
    throw std::invalid_argument(
        fmt::format("its key '{}' holds {}; a run record has {} or null there", key, type_word(*it), expected<T>()));
  return std::move(*value);
}

template <typename Json>
RunRecord from_json(const Json& json) {
  if (!json.is_object()) throw std::invalid_argument(fmt::format("it holds {}, not a record (an object)", type_word(json)));
  for (const auto& [key, value] : json.items())
    if (!find_column(key)) throw std::invalid_argument(fmt::format("its key '{}' is none of a run record's", key));
  RunRecord record;
  for_each_field(record, [&](const char* key, auto& field) {
    using T = std::remove_cvref_t<decltype(*field.value())>;
    field = read_field<T>(json, key);
  });
  return record;
}

}  // namespace

nlohmann::ordered_json to_json(const RunRecord& record) {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  for_each_field(record, [&](const char* key, const auto& field) {
    if (!field.present()) return;
    j[key] = field.value() ? value_json<nlohmann::ordered_json>(*field.value()) : nlohmann::ordered_json(nullptr);
  });
  return in_column_order(j);
}

RunRecord record_from_json(const nlohmann::ordered_json& json) { return from_json(json); }
RunRecord record_from_json(const nlohmann::json& json) { return from_json(json); }

template <typename T>
Field<T> field_from_json(const nlohmann::json& json, const char* key) {
  if (!json.is_object()) throw std::invalid_argument(fmt::format("it holds {}, not a record (an object)", type_word(json)));
  return read_field<T>(json, key);
}

template Field<std::int64_t> field_from_json(const nlohmann::json&, const char*);
template Field<double> field_from_json(const nlohmann::json&, const char*);
template Field<bool> field_from_json(const nlohmann::json&, const char*);
template Field<std::string> field_from_json(const nlohmann::json&, const char*);
template Field<Number> field_from_json(const nlohmann::json&, const char*);
template Field<Given> field_from_json(const nlohmann::json&, const char*);
template Field<Block> field_from_json(const nlohmann::json&, const char*);

}  // namespace tokbench::results
