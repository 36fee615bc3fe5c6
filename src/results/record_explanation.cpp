// Two records of one configuration, explained (record_explanation.hpp).
#include "results/record_explanation.hpp"

#include <fmt/format.h>

#include <variant>
#include <stdexcept>

#include "account/time_account_json.hpp"
#include "results/record_status.hpp"
#include "results/record_keys.hpp"
#include "usage/usage_error.hpp"

namespace tokbench::results {
namespace {

// A member as JSON, for comparing and showing it: null when absent or null.
template <typename T>
nlohmann::json json_of(const Field<T>& f) {
  if (!f.value()) return nullptr;
  if constexpr (std::is_same_v<T, Given>)
    return std::visit([](const auto& v) { return nlohmann::json(v); }, *f.value());
  else
    return nlohmann::json(*f.value());
}

std::string shown(const nlohmann::json& value) {
  return value.is_string() ? usage::printable(value.get<std::string>()) : usage::printable(value.dump());
}

account::TimeAccount account_of(const RunRecord& record, const std::string& where) {
  const std::string status = record.status.value_or("unknown");
  // A prediction (tokbench predict) carries the account of the run it was predicted from,
  // carried to its rank: explained against a measured run, it says where the prediction erred.
  const bool predicted = status == kStatusPredicted;
  if (status != kStatusOk && !predicted)
    usage::refuse(fmt::format("{}: its run ended with status '{}': only a finished run (ok) or a prediction has a "
                              "time account to explain", where, usage::printable(status)));
  if (!record.time_account.value()) {
    if (predicted)
      usage::refuse(fmt::format("{}: the prediction has no time account: the run it was predicted from had none; "
                                "predict from a run made with {} N", where, kTimeAccountOption));
    usage::refuse(fmt::format("{}: the record has no time account; run it again with {} N (N profiled iterations "
                              "after the measured window)", where, kTimeAccountOption));
  }
  try {
    return account::time_account_from_json(*record.time_account.value());
  } catch (const std::invalid_argument& e) {
    usage::refuse(fmt::format("{}: its {}", where, e.what()));
  }
}

}  // namespace

std::string run_label(const RunRecord& record) {
  const std::string compiler = record.compiler.value_or("");
  const std::string executor = record.executor.value_or("");
  // A prediction is named as the sweep's predicted columns are: "<executor> predicted" (the
  // sweep's own predictions already carry it in their compiler).
  const std::string suffix = " predicted";
  const bool named = compiler.size() >= suffix.size() &&
                     compiler.compare(compiler.size() - suffix.size(), suffix.size(), suffix) == 0;
  const std::string predicted = record.status.value_or("") == kStatusPredicted && !named ? suffix : "";
  if (compiler.empty()) return (executor.empty() ? "run" : executor) + predicted;
  if (executor.empty() || executor == compiler) return compiler + predicted;
  return compiler + " (" + executor + ")" + predicted;
}

account::Explanation explain_records(const RunRecord& base, const RunRecord& run, const std::string& base_where,
                                     const std::string& run_where) {
  const account::TimeAccount base_account = account_of(base, base_where);
  const account::TimeAccount run_account = account_of(run, run_where);
  // The keys that say what work a run did: a difference in any of them is another configuration
  // (absent and null alike are no value).
  const auto same = [&](const char* key, const auto& a_field, const auto& b_field) {
    const nlohmann::json a = json_of(a_field), b = json_of(b_field);
    if (a != b)
      usage::refuse(fmt::format("{} and {} are different configurations: '{}' is {} and {}; explain compares two "
                                "runs of one configuration (the same model, shape, precision, ranks and device)",
                                base_where, run_where, key, shown(a), shown(b)));
  };
  same(key::model_name, base.model_name, run.model_name);
  same(key::n_layer, base.n_layer, run.n_layer);
  same(key::seq_len, base.seq_len, run.seq_len);
  same(key::micro_bs, base.micro_bs, run.micro_bs);
  same(key::global_bs, base.global_bs, run.global_bs);
  same(key::dtype, base.dtype, run.dtype);
  same(key::world_size, base.world_size, run.world_size);
  same(key::device, base.device, run.device);
  same(key::checkpoint_activations, base.checkpoint_activations, run.checkpoint_activations);
  std::string base_name = run_label(base), run_name = run_label(run);
  if (base_name == run_name) {  // two runs of one executor (two builds, two machines): name them by file
    base_name = base_where;
    run_name = run_where;
  }
  return account::explain(base_account, run_account, std::move(base_name), std::move(run_name));
}

}  // namespace tokbench::results
