// run_plan_json.hpp. Every key is train/run_plan_keys.hpp's. Enumerations are written as the option
// words a user types (dtype "bf16-true", dist.units "block"), the same words the JSON result uses.
#include "run/run_plan_json.hpp"

#include <string>

#include "model/config_json.hpp"
#include "train/run_plan_keys.hpp"

namespace tokbench::run {
namespace {

using json = nlohmann::ordered_json;
namespace plan_key = train::run_plan_key;

// What resolution decided of the loop's options; the options as given (seed, AdamW's, zero_grad,
// num_threads, dynamic, ...) travel in `options`.
json to_json(const train::TrainOptions& t) {
  return json{{plan_key::micro_batch, t.micro_batch},
              {plan_key::seq_len, t.seq_len},
              {plan_key::grad_accum, t.grad_accum},
              {plan_key::max_iters, t.max_iters},
              {plan_key::warmup_iters, t.warmup_iters},
              {plan_key::dtype, std::string(model::to_string(t.dtype))}};
}

// This rank's place and the layout resolved (the mode word and the timeout are the options').
json to_json(const distributed::DistributedSettings& d) {
  return json{{plan_key::world_size, d.env.world_size},
              {plan_key::rank, d.env.rank},
              {plan_key::local_rank, d.env.local_rank},
              {plan_key::shard_mode, distributed::to_string(d.shard_mode)},
              {plan_key::units, distributed::to_string(d.units)},
              {plan_key::min_unit_params, d.min_unit_params},
              {plan_key::shard_group_size, d.hybrid() ? json(*d.shard_group_size) : json(nullptr)},
              {plan_key::ddp_bucket_bytes, d.ddp_bucket_bytes},
              {plan_key::skip_sync_until_last_micro, d.skip_sync_until_last_micro},
              {plan_key::backend, distributed::to_string(d.backend)}};
}

json to_json(const CompilerChoice& c) {
  return json{{plan_key::executor, to_string(c.executor)},
              {plan_key::thunder_front_end, to_string(c.thunder_front_end)},
              {plan_key::thunder_executors, c.thunder_executors}};
}

}  // namespace

json to_json(const RunPlan& plan) {
  json model{{plan_key::name, plan.config.name.empty() ? plan.model_label : plan.config.name},
             {plan_key::n_layer, plan.config.n_layer}};
  // A --model-config file's model, as tokbench read it (litgpt's field names, finalized, the
  // overrides applied): the Python step builds litgpt's Config from these fields, as the
  // catalog's own fields come from the same table; null for a catalog model (a name is enough).
  model[plan_key::config] = plan.options.model_config.empty() ? json(nullptr) : json(model::config_to_json(plan.config));
  return json{{plan_key::model, std::move(model)},
              {plan_key::train, to_json(plan.train)},
              {plan_key::dist, to_json(plan.dist)},
              {plan_key::compiler, to_json(plan.compiler)},
              {plan_key::device, {{plan_key::device_string, plan.device_string}, {plan_key::tf32, plan.tf32}}},
              {plan_key::checkpoint_activations, plan.checkpoint_activations},
              // Every option by its record key, each row's default filled in (--data-seed: --seed).
              {plan_key::options, options_json(config::with_defaults(plan.options))},
              {plan_key::profile, {{plan_key::profile_path, plan.profile_path.string()}, {plan_key::profile_iters, plan.profile_iters}}},
              {plan_key::time_account_iters, plan.time_account_iters},
              // The test hook (resolve_time_account.hpp), this rank's: the step sleeps as tokbench's loop does.
              {plan_key::test_host_delay_seconds, plan.test_host_delay_seconds},
              // The test hook TOKBENCH_TEST_SAME_START (resolve.hpp).
              {plan_key::test_same_start, plan.test_same_start},
              {plan_key::memory_snapshot, plan.memory_snapshot_path.string()}};
}

}  // namespace tokbench::run
