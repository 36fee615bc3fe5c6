// What any owner of option rows does with them: register them on a CLI11 command and check
// their values. `tokbench run` does it for every section (RunOptions); `tokbench comm` for the
// launcher section's rows and two rows it binds to members of its own (comm/comm_options.cpp),
// so that an option both commands take has one name, one parse-time check and one refusal.
#pragma once

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cmath>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "config/field.hpp"
#include "config/numbers.hpp"
#include "usage/usage_error.hpp"

namespace tokbench::config {

namespace rows_detail {
// A member's value type, an optional's own (std::optional<int64_t> -> int64_t).
template <typename T>
struct Unwrapped {
  using type = T;
  static constexpr bool optional = false;
};
template <typename T>
struct Unwrapped<std::optional<T>> {
  using type = T;
  static constexpr bool optional = true;
};
// The type a pointer to member points at (int64_t LauncherSection::* -> int64_t).
template <typename Pointer>
struct Pointee;
template <typename T, typename C>
struct Pointee<T C::*> {
  using type = T;
};
}  // namespace rows_detail

// A section's row for an owner that inherits the section (RunOptions, or a command's options
// made of the section): the same row, its member reached through the owner.
template <typename Owner, typename Section>
FieldOf<Owner> rebind(const FieldOf<Section>& row) {
  static_assert(std::is_base_of_v<Section, Owner>);
  // Every member named, each what it becomes for the owner (the owner-typed ones filled below):
  // none is left to a default by omission.
  FieldOf<Owner> out{.names = row.names,
                     .member = {},
                     .help = row.help,
                     .group = row.group,
                     .predict_help = row.predict_help,
                     .valid = row.valid,
                     .choices = row.choices,
                     .empty_is_default = row.empty_is_default,
                     .bounds = row.bounds,
                     .record = row.record,
                     .shapes = row.shapes,
                     .given = nullptr,
                     .defaults_to = std::nullopt,
                     .refuse_with = nullptr};
  std::visit([&](auto pointer) { out.member = static_cast<typename rows_detail::Pointee<decltype(pointer)>::type Owner::*>(pointer); },
             row.member);
  if (row.given != nullptr) out.given = static_cast<bool Owner::*>(row.given);
  if (row.defaults_to)
    std::visit([&](auto pointer) { out.defaults_to = static_cast<typename rows_detail::Pointee<decltype(pointer)>::type Owner::*>(pointer); },
               *row.defaults_to);
  // A check of other options reads the section's owner; none of the rows rebound today has one.
  if (row.refuse_with != nullptr)
    throw std::logic_error(fmt::format("option {}: a row with a check of other options cannot be rebound", row.names));
  return out;
}

// A row bound to another owner's member of the same type: its names, checks and refusals as
// they are, for a command that keeps the value in a struct of its own. `help` and `group`
// replace the row's where the command says more (nullptr: the row's). Throws std::logic_error
// when the member's type is not the row's.
template <typename Owner, typename T, typename Section>
FieldOf<Owner> rebind(const FieldOf<Section>& row, T Owner::*member, const char* help = nullptr,
                      const char* group = nullptr) {
  if (!std::holds_alternative<T Section::*>(row.member))
    throw std::logic_error(fmt::format("option {} rebound to a member of another type", row.names));
  // The record, compare's key and the section's own wiring (given, defaults_to, refuse_with,
  // which read the section's owner) stay with the section's rows.
  return FieldOf<Owner>{.names = row.names,
                        .member = member,
                        .help = help != nullptr ? help : row.help,
                        .group = group != nullptr ? group : row.group,
                        .predict_help = row.predict_help,
                        .valid = row.valid,
                        .choices = row.choices,
                        .empty_is_default = row.empty_is_default,
                        .bounds = row.bounds,
                        .record = {},
                        .shapes = {},
                        .given = nullptr,
                        .defaults_to = std::nullopt,
                        .refuse_with = nullptr};
}

// The row of `table` that fills `member` (a section's table and one of its members), for a
// command that takes that one option too. Throws std::logic_error when none does.
template <typename Owner, typename T, typename Section>
const FieldOf<Owner>& row_of(const std::vector<FieldOf<Owner>>& table, T Section::*member) {
  T Owner::*const wanted = member;
  for (const FieldOf<Owner>& row : table)
    if (const auto* pointer = std::get_if<T Owner::*>(&row.member); pointer != nullptr && *pointer == wanted) return row;
  throw std::logic_error("row_of: no row of the table fills this member");
}

// Registers `rows` on `app`, bound to `owner` (whose current values are the defaults --help
// shows): booleans are flags that also take "=True/False" (the reference's jsonargparse
// spelling); numbers are checked at parse time (numbers.hpp) with their row's `valid` text.
template <typename Owner, typename Rows>
void register_rows(CLI::App& app, Owner& owner, const Rows& rows) {
  for (const FieldOf<Owner>* field : rows) {
    std::visit(
        [&](auto pointer) {
          auto& target = owner.*pointer;
          using T = typename rows_detail::Unwrapped<std::remove_cvref_t<decltype(target)>>::type;
          CLI::Option* option = nullptr;
          if constexpr (std::is_same_v<T, bool>) {
            option = app.add_flag(field->names, target, field->help);
          } else {
            option = app.add_option(field->names, target, field->help);
            if constexpr (std::is_arithmetic_v<T>) {
              if (field->valid.empty())
                throw std::logic_error(fmt::format("option {} is a number without a 'valid' text", field->names));
              if constexpr (std::is_floating_point_v<T>) option->transform(finite_number(field->valid));
              else if constexpr (std::is_same_v<T, int>) option->transform(whole_number<int>(field->valid));
              else if constexpr (std::is_unsigned_v<T>) option->transform(whole_number<uint64_t>(field->valid));
              else option->transform(whole_number<int64_t>(field->valid));
            }
          }
          if (field->given != nullptr) {
            bool Owner::*given = field->given;
            option->each([&owner, given](const std::string&) { owner.*given = true; });
          }
          if (field->group != nullptr) option->group(field->group);
        },
        field->member);
  }
}

namespace rows_detail {
// The option's name in a refusal: its first (kebab-case) name.
inline std::string option_name(const char* names) {
  const std::string all = names;
  return all.substr(0, all.find(','));
}

template <typename Row, typename T>
void check_number(const Row& field, T value) {
  const Bounds& b = field.bounds;
  if (b.positive && value <= 0)
    usage::refuse(fmt::format("{} {} must be a positive integer", option_name(field.names), value));
  const auto v = static_cast<double>(value);
  const bool low = b.min && (b.min_open ? !(v > *b.min) : !(v >= *b.min));
  const bool high = b.max && (b.max_open ? !(v < *b.max) : !(v <= *b.max));
  // Not finite (NaN, inf: only a caller that sets the member itself can make one) is outside any bounds.
  if (low || high || (b.whole && std::floor(v) != v) || (!b.refusal.empty() && !std::isfinite(v)))
    usage::refuse(fmt::format("{} {} {}", option_name(field.names), value, b.refusal));
}

template <typename Row, typename T>
void check_value(const Row& field, const T& value) {
  if constexpr (std::is_same_v<T, std::string>) {
    if (field.choices == nullptr || (field.empty_is_default && value.empty())) return;
    usage::require_choice(option_name(field.names), value, field.choices());
  } else if constexpr (std::is_arithmetic_v<T> && !std::is_same_v<T, bool>) {
    check_number(field, value);
  }
}

template <typename Row, typename T>
void check_value(const Row& field, const std::optional<T>& value) {
  if (value) check_value(field, *value);
}
}  // namespace rows_detail

// Refuses (usage::refuse: one line, exit 2) `field`'s value in `owner` when it is not one of the
// row's choices or lies outside its bounds: the value alone (not the row's refuse_with, which
// reads the other options).
template <typename Owner>
void check_row_value(const Owner& owner, const FieldOf<Owner>& field) {
  std::visit([&](auto pointer) { rows_detail::check_value(field, owner.*pointer); }, field.member);
}

// Refuses (usage::refuse: one line, exit 2) the first of `rows`, in their order, whose value in
// `owner` is not one of its row's choices or lies outside its row's bounds, or that its row's
// refuse_with refuses beside the others.
template <typename Owner, typename Rows>
void check_rows(const Owner& owner, const Rows& rows) {
  for (const FieldOf<Owner>* field : rows) {
    check_row_value(owner, *field);
    if (field->refuse_with == nullptr) continue;
    if (const std::string refusal = field->refuse_with(owner); !refusal.empty()) usage::refuse(refusal);
  }
}

}  // namespace tokbench::config
