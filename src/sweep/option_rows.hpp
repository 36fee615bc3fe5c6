// The options the sweep itself reads from a configuration (its device, its executor, its CPU
// threads, the launcher's ranks and nodes), by the config rows that declare them: a sweep names an option as its flag, so the
// row's names ("--compile,--executor") are where that name is spelled, once.
#pragma once

#include <algorithm>
#include <string>
#include <string_view>

#include "config/device.hpp"
#include "config/launcher.hpp"
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

// The launcher's rows: --nproc-per-node and --nnodes as given ("1" where absent), and whether a
// configuration's option (its canonical name) is one of the built-in launcher's, which Slurm's
// sbatch and srun replace.
inline std::string nproc_per_node_of(const Configuration& c) {
  return c.value_of_row(config::row_of(config::launcher_fields(), &config::LauncherSection::nproc_per_node).names, "1");
}
inline std::string nnodes_of(const Configuration& c) {
  return c.value_of_row(config::row_of(config::launcher_fields(), &config::LauncherSection::nnodes).names, "1");
}
// Whether `option` (a configuration's canonical name) is one of a row's names ("--a,--b_c").
inline bool names_option(std::string_view names, const std::string& option) {
  for (std::size_t start = 0; start <= names.size();) {
    const std::size_t comma = std::min(names.find(',', start), names.size());
    if (canonical_option(std::string(names.substr(start, comma - start))) == option) return true;
    start = comma + 1;
  }
  return false;
}
inline bool is_ranks_option(const std::string& option) {
  return names_option(config::row_of(config::launcher_fields(), &config::LauncherSection::nproc_per_node).names, option) ||
         names_option(config::row_of(config::launcher_fields(), &config::LauncherSection::nnodes).names, option);
}
inline bool is_launcher_option(const std::string& option) {
  for (const auto& row : config::launcher_fields())
    if (names_option(row.names, option)) return true;
  return false;
}

}  // namespace tokbench::sweep
