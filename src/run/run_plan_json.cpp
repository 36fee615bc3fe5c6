// run_plan_json.hpp. Enumerations are written as the option words a user types (dtype
// "bf16-true", dist.units "block"), the same words the JSON result uses.
#include "run/run_plan_json.hpp"

#include <string>

#include "model/config_json.hpp"

namespace tokbench::run {
namespace {

using json = nlohmann::ordered_json;

json to_json(const train::TrainOptions& t) {
  return json{{"micro_batch", t.micro_batch},
              {"seq_len", t.seq_len},
              {"grad_accum", t.grad_accum},
              {"max_iters", t.max_iters},
              {"warmup_iters", t.warmup_iters},
              {"seed", t.seed},
              {"dtype", std::string(model::to_string(t.dtype))},
              {"adamw",
               {{"lr", t.adamw.lr}, {"weight_decay", t.adamw.weight_decay}, {"beta1", t.adamw.beta1},
                {"beta2", t.adamw.beta2}, {"eps", t.adamw.eps}}},
              {"zero_grad", train::to_string(t.zero_grad)},
              {"data",
               {{"token_file", t.data.token_file.string()}, {"token_bytes", t.data.token_bytes},
                {"sequential", t.data.sequential}, {"dynamic_lengths", t.data.dynamic_lengths}}},
              {"cpu_memory_cap_bytes", t.cpu_memory_cap_bytes ? json(*t.cpu_memory_cap_bytes) : json(nullptr)},
              {"num_threads", t.num_threads}};
}

json to_json(const distributed::DistributedSettings& d) {
  return json{{"world_size", d.env.world_size},
              {"rank", d.env.rank},
              {"local_rank", d.env.local_rank},
              {"mode", distributed::to_string(d.mode)},
              {"shard_mode", distributed::to_string(d.shard_mode)},
              {"units", distributed::to_string(d.units)},
              {"min_unit_params", d.min_unit_params},
              {"shard_group_size", d.hybrid() ? json(*d.shard_group_size) : json(nullptr)},
              {"ddp_bucket_bytes", d.ddp_bucket_bytes},
              {"ddp_overlap", d.ddp_overlap},
              {"skip_sync_until_last_micro", d.skip_sync_until_last_micro},
              {"timeout_seconds", d.timeout_seconds},
              {"backend", distributed::to_string(d.backend)}};
}

json to_json(const CompilerChoice& c) {
  return json{{"compiler", c.compiler},
              {"executor", to_string(c.executor)},
              {"thunder_front_end", to_string(c.thunder_front_end)},
              {"thunder_executors", c.thunder_executors}};
}

}  // namespace

json to_json(const RunPlan& plan) {
  json model{{"name", plan.config.name.empty() ? plan.model_label : plan.config.name},
             {"n_layer", plan.config.n_layer}};
  // A --model-config file's model, as tokbench read it (litgpt's field names, finalized, the
  // overrides applied): the Python step builds litgpt's Config from these fields, as the
  // catalog's own fields come from the same table; null for a catalog model (a name is enough).
  model["config"] = plan.options.model_config.empty() ? json(nullptr) : json(model::config_to_json(plan.config));
  return json{{"model", std::move(model)},
              {"train", to_json(plan.train)},
              {"dist", to_json(plan.dist)},
              {"compiler", to_json(plan.compiler)},
              {"device", {{"string", plan.device_string}, {"tf32", plan.tf32}}},
              {"checkpoint_activations", plan.checkpoint_activations},
              // Every option by its record key, each row's default filled in (--data-seed: --seed).
              {"options", options_json(config::with_defaults(plan.options))},
              {"profile", {{"path", plan.profile_path.string()}, {"iters", plan.profile_iters}}},
              {"time_account_iters", plan.time_account_iters},
              // The test hook (resolve_time_account.hpp), this rank's: the step sleeps as tokbench's loop does.
              {"test_host_delay_seconds", plan.test_host_delay_seconds},
              // The test hook TOKBENCH_TEST_SAME_START (resolve.hpp).
              {"test_same_start", plan.test_same_start},
              {"memory_snapshot", plan.memory_snapshot_path.string()}};
}

}  // namespace tokbench::run
