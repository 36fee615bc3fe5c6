// The target's options (target_options.hpp): the rows of the config sections that say predict
// models them (their predict_help), and the refusal of the sections' other options.
#include "predict/target_options.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <type_traits>

#include "config/rows.hpp"
#include "config/run_options.hpp"
#include "usage/usage_error.hpp"

namespace tokbench::predict {
namespace {

constexpr char kGroup[] = "Target run (unset: the measured run's)";

// Calls visit(row, member) for every row of `table`, a table of `Section`, with the row's member
// as a pointer into TargetOptions. A RunOptions row's member is one of `Section`'s (the table is
// the section's own), so the cast back to the section is exact.
template <typename Section, typename Row, typename Visit>
void each_row_of(const std::vector<Row>& table, Visit& visit) {
  for (const Row& row : table)
    std::visit(
        [&](auto pointer) {
          using T = typename config::rows_detail::Pointee<decltype(pointer)>::type;
          visit(row, static_cast<T TargetOptions::*>(static_cast<T Section::*>(pointer)));
        },
        row.member);
}

// Every row of the sections TargetOptions is made of, in --help's order of `tokbench run`.
template <typename Visit>
void each_section_row(Visit visit) {
  each_row_of<config::LauncherSection>(config::launcher_fields(), visit);
  each_row_of<config::ParallelismSection>(config::parallelism_fields(), visit);
  each_row_of<config::BatchSection>(config::batch_fields(), visit);
  each_row_of<config::DeviceSection>(config::device_fields(), visit);
}

// The first names of the modelled rows, in their order.
const std::vector<std::string>& modelled_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const auto& row : target_rows()) out.push_back(first_name(row.names));
    return out;
  }();
  return names;
}

bool is_modelled(const std::string& name) {
  const auto& names = modelled_names();
  return std::find(names.begin(), names.end(), name) != names.end();
}

}  // namespace

std::string first_name(const char* names) {
  const std::string all = names;
  return all.substr(0, all.find(','));
}

const std::vector<config::FieldOf<TargetOptions>>& target_rows() {
  static const std::vector<config::FieldOf<TargetOptions>> rows = [] {
    std::vector<config::FieldOf<TargetOptions>> out;
    each_section_row([&](const auto& row, auto member) {
      if (row.predict_help != nullptr) out.push_back(config::rebind(row, member, row.predict_help, kGroup));
    });
    return out;
  }();
  return rows;
}

void add_target_options(CLI::App& sub, TargetOptions& t) {
  std::vector<const config::FieldOf<TargetOptions>*> rows;
  for (const auto& row : target_rows()) rows.push_back(&row);
  config::register_rows(sub, t, rows);
  for (const std::string& name : modelled_names())
    sub.get_option(name)->each([&t, name](const std::string&) { t.given.insert(name); });
  // The sections' other options: taken (hidden from --help) only to be refused by name.
  static std::string ignored_text;
  static bool ignored_flag = false;
  each_section_row([&](const auto& row, auto member) {
    if (row.predict_help != nullptr) return;
    const std::string name = first_name(row.names);
    CLI::Option* option = nullptr;
    if constexpr (std::is_same_v<decltype(member), bool TargetOptions::*>) option = sub.add_flag(row.names, ignored_flag);
    else option = sub.add_option(row.names, ignored_text);
    option->group("")->each([&t, name](const std::string&) { t.given.insert(name); });
  });
}

void check_target_options(const TargetOptions& t) {
  for (const std::string& name : t.given)
    if (!is_modelled(name))
      usage::refuse(fmt::format("{} is the measured run's: the prediction does not model it; valid: {}", name,
                                fmt::join(modelled_names(), ", ")));
  for (const auto& row : target_rows())
    if (t.given.count(first_name(row.names))) config::check_row_value(t, row);
}

}  // namespace tokbench::predict
