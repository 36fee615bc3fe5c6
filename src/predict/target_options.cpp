// The target's options (target_options.hpp): which rows of the config sections predict models,
// with predict's help, and the refusal of the sections' other options.
#include "predict/target_options.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "config/rows.hpp"
#include "config/run_options.hpp"
#include "usage/usage_error.hpp"

namespace tokbench::predict {
namespace {

constexpr char kGroup[] = "Target run (unset: the measured run's)";

// The section's row that fills `member`, bound to TargetOptions with predict's help.
template <typename Row, typename T, typename Section>
config::FieldOf<TargetOptions> modelled(const std::vector<Row>& table, T Section::*member, const char* help) {
  return config::rebind<TargetOptions>(config::row_of(table, member), static_cast<T TargetOptions::*>(member), help,
                                       kGroup);
}

// Every row of the sections TargetOptions is made of: its names and whether it is a flag.
std::vector<std::pair<const char*, bool>> section_rows() {
  std::vector<std::pair<const char*, bool>> rows;
  for (const auto& row : config::launcher_fields())
    rows.emplace_back(row.names, std::holds_alternative<bool config::LauncherSection::*>(row.member));
  for (const auto* table : {&config::parallelism_fields(), &config::batch_fields(), &config::device_fields()})
    for (const auto& row : *table)
      rows.emplace_back(row.names, std::holds_alternative<bool config::RunOptions::*>(row.member));
  return rows;
}

bool is_modelled(const std::string& name) {
  for (const auto& row : target_rows())
    if (first_name(row.names) == name) return true;
  return false;
}

}  // namespace

std::string first_name(const char* names) {
  const std::string all = names;
  return all.substr(0, all.find(','));
}

const std::vector<config::FieldOf<TargetOptions>>& target_rows() {
  using config::BatchSection, config::DeviceSection, config::LauncherSection, config::ParallelismSection;
  static const std::vector<config::FieldOf<TargetOptions>> rows{
      modelled(config::launcher_fields(), &LauncherSection::nproc_per_node,
               "ranks per node (default: the measured run's ranks on one machine, at most the cluster's devices)"),
      modelled(config::launcher_fields(), &LauncherSection::nnodes, "nodes (default 1)"),
      modelled(config::parallelism_fields(), &ParallelismSection::distributed_mode,
               "none, ddp or fsdp (default: the measured run's)"),
      modelled(config::parallelism_fields(), &ParallelismSection::shard_mode,
               "fsdp: zero2, zero3, hybrid_zero2, hybrid_zero3"),
      modelled(config::parallelism_fields(), &ParallelismSection::sharding_size,
               "fsdp: ranks per shard group (hybrid sharding)"),
      modelled(config::parallelism_fields(), &ParallelismSection::bucketing_mode,
               "fsdp units: none (the whole model), block, or size (modules cut by parameter count, ZeRO-2)"),
      modelled(config::parallelism_fields(), &ParallelismSection::fsdp_bucket_params,
               "--bucketing-mode size: the parameter count that makes a module a unit (default: the measured "
               "run's, else 1e8)"),
      modelled(config::batch_fields(), &BatchSection::global_batch_size,
               "sequences per iteration, all ranks (default: the measured GA kept: micro x GA x ranks)"),
      modelled(config::batch_fields(), &BatchSection::micro_batch_size,
               "only the measured run's (compute per micro-batch is measured, not modelled)"),
      modelled(config::parallelism_fields(), &ParallelismSection::ddp_bucket_size_mb,
               "ddp: bucket size in MB (default: the measured run's)"),
      modelled(config::device_fields(), &DeviceSection::num_threads, "CPU: intra-op threads per rank (0: every core)"),
  };
  return rows;
}

void add_target_options(CLI::App& sub, TargetOptions& t) {
  std::vector<const config::FieldOf<TargetOptions>*> rows;
  for (const auto& row : target_rows()) rows.push_back(&row);
  config::register_rows(sub, t, rows);
  for (const auto& row : target_rows()) {
    const std::string name = first_name(row.names);
    sub.get_option(name)->each([&t, name](const std::string&) { t.given.insert(name); });
  }
  // The sections' other options: taken (hidden from --help) only to be refused by name.
  static std::string ignored_text;
  static bool ignored_flag = false;
  for (const auto& [names, flag] : section_rows()) {
    const std::string name = first_name(names);
    if (is_modelled(name)) continue;
    CLI::Option* option = flag ? sub.add_flag(names, ignored_flag) : sub.add_option(names, ignored_text);
    option->group("")->each([&t, name](const std::string&) { t.given.insert(name); });
  }
}

void refuse_unmodelled(const TargetOptions& t) {
  for (const std::string& name : t.given) {
    if (is_modelled(name)) continue;
    std::vector<std::string> takes;
    for (const auto& row : target_rows()) takes.push_back(first_name(row.names));
    usage::refuse(fmt::format("{} is the measured run's: the prediction does not model it; valid: {}", name,
                              fmt::join(takes, ", ")));
  }
}

}  // namespace tokbench::predict
