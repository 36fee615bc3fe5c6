// Two records of one configuration, explained (record_explanation.hpp).
#include "results/record_explanation.hpp"

#include <fmt/format.h>

#include <array>
#include <stdexcept>

#include "account/time_account_json.hpp"
#include "results/record_status.hpp"
#include "results/record_keys.hpp"
#include "usage/usage_error.hpp"

namespace tokbench::results {
namespace {

// The keys that say what work a run did: a difference in any of them is another configuration.
// (The record's own spellings; "Seq Len" and "Micro BS" are the reference's keys.)
constexpr std::array<const char*, 9> kConfigurationKeys = {
    key::model_name, key::n_layer, key::seq_len, key::micro_bs, key::global_bs, key::dtype, key::world_size, key::device, key::checkpoint_activations,
};

std::string shown(const nlohmann::json& value) {
  return value.is_string() ? usage::printable(value.get<std::string>()) : usage::printable(value.dump());
}

account::TimeAccount account_of(const nlohmann::json& record, const std::string& where) {
  const auto status = record.value(key::status, std::string("unknown"));
  if (status != kStatusOk)
    usage::refuse(fmt::format("{}: its run ended with status '{}': only a finished run (ok) has a time account to "
                              "explain", where, usage::printable(status)));
  const auto it = record.find(key::time_account);
  if (it == record.end() || it->is_null())
    usage::refuse(fmt::format("{}: the record has no time account; run it again with {} N (N profiled iterations "
                              "after the measured window)", where, kTimeAccountOption));
  try {
    return account::time_account_from_json(*it);
  } catch (const std::invalid_argument& e) {
    usage::refuse(fmt::format("{}: its {}", where, e.what()));
  }
}

}  // namespace

std::string run_label(const nlohmann::json& record) {
  const std::string compiler = record.value(key::compiler, std::string());
  const std::string executor = record.value(key::executor, std::string());
  if (compiler.empty()) return executor.empty() ? "run" : executor;
  if (executor.empty() || executor == compiler) return compiler;
  return compiler + " (" + executor + ")";
}

account::Explanation explain_records(const nlohmann::json& base, const nlohmann::json& run,
                                     const std::string& base_where, const std::string& run_where) {
  const account::TimeAccount base_account = account_of(base, base_where);
  const account::TimeAccount run_account = account_of(run, run_where);
  for (const char* key : kConfigurationKeys) {
    const nlohmann::json none;
    const nlohmann::json& a = base.contains(key) ? base.at(key) : none;
    const nlohmann::json& b = run.contains(key) ? run.at(key) : none;
    if (a != b)
      usage::refuse(fmt::format("{} and {} are different configurations: '{}' is {} and {}; explain compares two "
                                "runs of one configuration (the same model, shape, precision, ranks and device)",
                                base_where, run_where, key, shown(a), shown(b)));
  }
  std::string base_name = run_label(base), run_name = run_label(run);
  if (base_name == run_name) {  // two runs of one executor (two builds, two machines): name them by file
    base_name = base_where;
    run_name = run_where;
  }
  return account::explain(base_account, run_account, std::move(base_name), std::move(run_name));
}

}  // namespace tokbench::results
