// The options the sweep itself reads from a configuration (its device, its executor, its CPU
// threads), by the config rows that declare them: a sweep names an option as its flag, so the
// row's names ("--compile,--executor") are where that name is spelled, once.
#pragma once

#include <string>

#include "config/device.hpp"
#include "config/rows.hpp"
#include "config/run_options.hpp"
#include "sweep/matrix.hpp"

namespace tokbench::sweep {

inline std::string device_of(const Configuration& c, const std::string& fallback = "") {
  return c.value_of_row(config::row_of(config::device_fields(), &config::DeviceSection::device).names, fallback);
}
// --compile (or its alias --executor) as given, else tokbench's default executor.
inline std::string executor_of(const Configuration& c) {
  return c.value_of_row(config::row_of(config::device_fields(), &config::DeviceSection::compile).names,
                        config::kDefaultExecutor);
}
inline std::string num_threads_of(const Configuration& c) {
  return c.value_of_row(config::row_of(config::device_fields(), &config::DeviceSection::num_threads).names);
}

}  // namespace tokbench::sweep
