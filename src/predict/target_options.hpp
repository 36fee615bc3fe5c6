// The options of `tokbench run` a prediction changes: the config sections they belong to (their
// rows registered on `tokbench predict` and read from a sweep row), a value "given, else the
// measured run's", and the refusal of a section's option the prediction does not model. Torch-free.
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "config/batch.hpp"
#include "config/device.hpp"
#include "config/field.hpp"
#include "config/launcher.hpp"
#include "config/parallelism.hpp"

namespace tokbench::predict {

// The sections whose options shape the predicted run. A member keeps `tokbench run`'s default
// until given; only a given one is the prediction's (taken()), the rest are the measured run's
// (GA kept, so the global batch grows with the ranks).
struct TargetOptions : config::LauncherSection, config::ParallelismSection, config::BatchSection,
                       config::DeviceSection {
  // The options given, by their first name ("--nproc-per-node"): the modelled ones and any other
  // of the sections, which resolve_target refuses.
  std::set<std::string> given;
  std::optional<int64_t> measured_cores;  // the cores of the machine the run was measured on
  std::optional<int64_t> cores_per_node;  // the cluster's (CPU clusters)

  // Sets a modelled option as given (a sweep row, a test).
  template <typename T, typename Section, typename V>
  TargetOptions& set(T Section::*member, V value);
  // The value of a modelled option when given; unset: the measured run's.
  template <typename T, typename Section>
  auto taken(T Section::*member) const;
};

// The rows predict models: the sections' rows that have a predict_help (config/field.hpp), in
// the sections' order (launcher, parallelism, batch, device), each (flag, alias, parse-time
// check) bound to TargetOptions with its predict_help as the help.
const std::vector<config::FieldOf<TargetOptions>>& target_rows();
// The first name of the modelled row that fills `member` (a pointer into TargetOptions).
template <typename T>
const char* target_name(T TargetOptions::*member) {
  for (const auto& row : target_rows())
    if (const auto* p = std::get_if<T TargetOptions::*>(&row.member); p != nullptr && *p == member) return row.names;
  throw std::logic_error("target_name: predict does not model this member");
}
// "--a,--b" -> "--a".
std::string first_name(const char* names);

template <typename T, typename Section, typename V>
TargetOptions& TargetOptions::set(T Section::*member, V value) {
  const auto m = static_cast<T TargetOptions::*>(member);
  this->*m = std::move(value);
  given.insert(first_name(target_name(m)));
  return *this;
}

template <typename T, typename Section>
auto TargetOptions::taken(T Section::*member) const {
  const auto m = static_cast<T TargetOptions::*>(member);
  if constexpr (requires { typename T::value_type; } && !std::is_same_v<T, std::string>) {
    return given.count(first_name(target_name(m))) ? this->*m : T{};
  } else {
    return given.count(first_name(target_name(m))) ? std::optional<T>(this->*m) : std::optional<T>{};
  }
}

// Registers the target's options on `tokbench predict`: the modelled rows with their checks, and
// every other option of the sections, so that resolve_target can refuse it by name.
void add_target_options(CLI::App& sub, TargetOptions& t);
// Refuses (one line, exit 2) an option of the sections that the prediction does not model,
// naming it and the options it takes; then a modelled option given with a value outside its
// row's choices or bounds (`tokbench run`'s). Each option alone, whatever the measured run:
// what depends on it (the modes predict models, the batch's split) is resolve_target's.
void check_target_options(const TargetOptions& t);

}  // namespace tokbench::predict
