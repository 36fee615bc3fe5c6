// What follows from the sections' tables (run_options.hpp): one generic pass over the fields
// for each of the registration, the `config` block, the value types and compare's keys.
#include "config/run_options.hpp"

#include "config/rows.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>
#include <stdexcept>
#include <type_traits>
#include <utility>

#include "usage/likely_meant.hpp"
#include "usage/usage_error.hpp"

namespace tokbench::config {
namespace {

using rows_detail::Unwrapped;
template <typename Pointer>
using MemberType = std::remove_cvref_t<decltype(std::declval<RunOptions&>().*std::declval<Pointer>())>;

// The long names of a field ("--kebab,--snake,!--no-x" -> kebab, snake, no-x).
std::vector<std::string> long_names(const Field& field) {
  std::vector<std::string> names;
  std::string all = field.names;
  std::size_t start = 0;
  while (start <= all.size()) {
    const std::size_t end = std::min(all.find(',', start), all.size());
    std::string name = all.substr(start, end - start);
    if (!name.empty() && name.front() == '!') name.erase(0, 1);
    if (name.rfind("--", 0) == 0) names.push_back(name.substr(2));
    start = end + 1;
  }
  return names;
}

}  // namespace

usage::ValueType value_type(const Member& member) {
  return std::visit(
      [](auto pointer) {
        using T = typename Unwrapped<MemberType<decltype(pointer)>>::type;
        if constexpr (std::is_same_v<T, bool>) return usage::ValueType::boolean;
        else if constexpr (std::is_integral_v<T>) return usage::ValueType::whole_number;
        else if constexpr (std::is_floating_point_v<T>) return usage::ValueType::number;
        else return usage::ValueType::text;
      },
      member);
}

const std::vector<const Field*>& all_fields() {
  static const std::vector<const Field*> fields = [] {
    std::vector<const Field*> all;
    // The launcher's rows are its section's (`tokbench comm` registers them too): reached through RunOptions.
    static const std::vector<Field> launcher = [] {
      std::vector<Field> rows;
      for (const auto& row : launcher_fields()) rows.push_back(rebind<RunOptions>(row));
      return rows;
    }();
    for (const auto* table : {&model_fields(), &batch_fields(), &device_fields(), &parallelism_fields(), &launcher,
                              &compatibility_fields(), &training_fields(), &data_fields(), &output_fields(),
                              &diagnostics_fields()})
      for (const Field& field : *table) all.push_back(&field);
    return all;
  }();
  return fields;
}

const std::vector<const DerivedValue*>& all_derived_values() {
  static const std::vector<const DerivedValue*> values = [] {
    std::vector<const DerivedValue*> all;
    for (const auto* table : {&batch_derived_values(), &parallelism_derived_values(), &launcher_derived_values()})
      for (const DerivedValue& value : *table) all.push_back(&value);
    return all;
  }();
  return values;
}

void register_fields(CLI::App& app, RunOptions& options) {
  app.option_defaults()->always_capture_default();
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  register_rows(app, options, all_fields());
}

nlohmann::ordered_json options_json(const RunOptions& options) {
  using json = nlohmann::ordered_json;
  std::map<int, std::pair<const char*, json>> block;  // place -> key, value
  for (const Field* field : all_fields()) {
    if (field->record.place == 0) continue;
    json value = std::visit(
        [&](auto pointer) -> json {
          const auto& member = options.*pointer;
          if constexpr (Unwrapped<MemberType<decltype(pointer)>>::optional)
            return member ? json(*member) : json(nullptr);
          else
            return json(member);
        },
        field->member);
    block.emplace(field->record.place, std::make_pair(field->record.key, std::move(value)));
  }
  for (const DerivedValue* derived : all_derived_values())
    if (derived->record.place != 0) block.emplace(derived->record.place, std::make_pair(derived->record.key, json(nullptr)));
  json out = json::object();
  for (auto& [place, entry] : block) out[entry.first] = std::move(entry.second);
  return out;
}

RunOptions with_defaults(RunOptions options) {
  for (const Field* field : all_fields()) {
    if (!field->defaults_to) continue;
    std::visit(
        [&](auto target, auto source) {
          using Target = MemberType<decltype(target)>;
          using Source = MemberType<decltype(source)>;
          if constexpr (Unwrapped<Target>::optional && std::is_same_v<typename Unwrapped<Target>::type, Source>) {
            if (!(options.*target)) options.*target = options.*source;
          } else {
            throw std::logic_error(fmt::format("option {}: defaults_to names a field of another type", field->names));
          }
        },
        field->member, *field->defaults_to);
  }
  return options;
}

usage::ValueType option_type(const std::string& option, const std::string& where) {
  std::vector<std::string> names;
  for (const Field* field : all_fields())
    for (const std::string& name : long_names(*field)) {
      if (name == option) return value_type(field->member);
      if (name.find('_') == std::string::npos) names.push_back(name);  // one spelling each: seq-len, not seq_len
    }
  std::string dashed = option;
  std::replace(dashed.begin(), dashed.end(), '_', '-');
  const std::optional<std::string> meant = usage::likely_meant(dashed, names);
  throw std::invalid_argument(fmt::format("{}: '{}' is not a `tokbench run` option{}; valid: the options of "
                                          "`tokbench run --help`, without their dashes",
                                          where, usage::printable(option),
                                          meant ? fmt::format(" (did you mean '{}'?)", *meant) : std::string()));
}

std::vector<IterationKey> iteration_keys() {
  std::vector<IterationKey> keys;
  for (const Field* field : all_fields())
    if (field->shapes.place != 0) keys.push_back(field->shapes);
  for (const DerivedValue* derived : all_derived_values())
    if (derived->shapes.place != 0) keys.push_back(derived->shapes);
  std::sort(keys.begin(), keys.end(), [](const IterationKey& a, const IterationKey& b) { return a.place < b.place; });
  return keys;
}

}  // namespace tokbench::config
