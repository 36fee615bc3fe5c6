// The litgpt field table: for each Config field its JSON reader and writer, in litgpt's
// declaration order. Fields litgpt has but tokbench's model does not implement are accepted
// only at their "off" value, so a full litgpt dump (every field present) still loads.
#include "model/config_json.hpp"

#include <fmt/format.h>

#include <functional>
#include <set>

#include "model/litgpt_keys.hpp"

namespace tokbench::model {
namespace {

namespace lk = litgpt_key;

using nlohmann::json;
using Problems = std::vector<std::string>;

std::string type_name(const json& value) {
  if (value.is_number_integer()) return "an integer";
  if (value.is_number_float()) return "a number";
  return std::string("a ") + value.type_name();
}

// Takes `v` into `out` when it is of the expected kind (`is_kind`); otherwise records one
// problem naming the field, what it must be and what it is.
template <typename T>
bool read_kind(const json& v, bool is_kind, const char* field, const char* expected, T& out, Problems& problems) {
  if (is_kind) {
    out = v.get<T>();
    return true;
  }
  problems.push_back(fmt::format("{} must be {}, got {} ({})", field, expected, type_name(v), v.dump()));
  return false;
}
bool read_int(const json& v, const char* field, int64_t& out, Problems& problems) {
  return read_kind(v, v.is_number_integer(), field, "an integer", out, problems);
}
bool read_double(const json& v, const char* field, double& out, Problems& problems) {
  return read_kind(v, v.is_number(), field, "a number", out, problems);
}
bool read_bool(const json& v, const char* field, bool& out, Problems& problems) {
  return read_kind(v, v.is_boolean(), field, "true or false", out, problems);
}
bool read_string(const json& v, const char* field, std::string& out, Problems& problems) {
  return read_kind(v, v.is_string(), field, "a string", out, problems);
}
template <typename T, typename Reader>
void read_optional(const json& v, const char* field, std::optional<T>& out, Problems& problems, Reader reader) {
  if (v.is_null()) {
    out.reset();
    return;
  }
  T value{};
  if (reader(v, field, value, problems)) out = value;
}
void read_int_list(const json& v, const char* field, std::vector<int>& out, Problems& problems) {
  if (v.is_null()) {
    out.clear();
    return;
  }
  if (!v.is_array()) {
    problems.push_back(fmt::format("{} must be a list of 0/1 per layer, got {}", field, type_name(v)));
    return;
  }
  std::vector<int> list;
  for (const auto& item : v) {
    if (!item.is_number_integer()) {
      problems.push_back(fmt::format("{} must hold integers 0/1, got {}", field, item.dump()));
      return;
    }
    list.push_back(item.get<int>());
  }
  out = std::move(list);
}
void read_rope_adjustments(const json& v, std::optional<RopeAdjustments>& out, Problems& problems) {
  if (v.is_null()) {
    out.reset();
    return;
  }
  if (!v.is_object()) {
    problems.push_back(fmt::format("rope_adjustments must be a table/object, got {}", type_name(v)));
    return;
  }
  RopeAdjustments adj;
  bool ok = true;
  for (const auto& [key, value] : v.items()) {
    if (key == lk::factor) {
      ok &= read_double(value, "rope_adjustments.factor", adj.factor, problems);
    } else if (key == lk::low_freq_factor) {
      read_optional<double>(value, "rope_adjustments.low_freq_factor", adj.low_freq_factor, problems, read_double);
    } else if (key == lk::high_freq_factor) {
      read_optional<double>(value, "rope_adjustments.high_freq_factor", adj.high_freq_factor, problems, read_double);
    } else if (key == lk::original_max_seq_len) {
      read_optional<int64_t>(value, "rope_adjustments.original_max_seq_len", adj.original_max_seq_len, problems,
                             read_int);
    } else if (key == lk::beta_fast || key == lk::beta_slow || key == lk::mscale || key == lk::mscale_all_dim) {
      problems.push_back(fmt::format(
          "rope_adjustments.{}: YaRN rope scaling is not supported by tokbench (use factor alone, or "
          "factor, low_freq_factor, high_freq_factor, original_max_seq_len)", key));
      ok = false;
    } else {
      problems.push_back(fmt::format("rope_adjustments.{} is not a known key (valid: factor, low_freq_factor, "
                                     "high_freq_factor, original_max_seq_len)", key));
      ok = false;
    }
  }
  const bool llama3 = adj.low_freq_factor || adj.high_freq_factor || adj.original_max_seq_len;
  if (llama3 && !(adj.low_freq_factor && adj.high_freq_factor && adj.original_max_seq_len)) {
    problems.push_back("rope_adjustments: Llama-3.1 style needs all of low_freq_factor, high_freq_factor, "
                       "original_max_seq_len");
    ok = false;
  }
  if (ok) out = adj;
}

// A litgpt field tokbench does not implement: only its "off" value is accepted.
void read_unsupported(const json& v, const char* field, const char* what, Problems& problems) {
  const bool off = v.is_null() || (v.is_boolean() && !v.get<bool>()) ||
                   (v.is_number() && v.get<double>() == 0.0) ||
                   (std::string_view(field) == lk::routed_scaling_factor && v.is_number() && v.get<double>() == 1.0);
  if (!off) problems.push_back(fmt::format("{}={}: {} is not supported by tokbench", field, v.dump(), what));
}

struct Field {
  const char* name;
  std::function<void(const json&, Config&, Problems&)> read;
  std::function<json(const Config&)> write;  // null for fields that are never written
};

template <typename T>
json opt(const std::optional<T>& value) {
  return value ? json(*value) : json(nullptr);
}

#define TB_INT(f) {lk::f, [](const json& v, Config& c, Problems& p) { read_int(v, lk::f, c.f, p); }, [](const Config& c) { return json(c.f); }}
#define TB_DOUBLE(f) {lk::f, [](const json& v, Config& c, Problems& p) { read_double(v, lk::f, c.f, p); }, [](const Config& c) { return json(c.f); }}
#define TB_BOOL(f) {lk::f, [](const json& v, Config& c, Problems& p) { read_bool(v, lk::f, c.f, p); }, [](const Config& c) { return json(c.f); }}
#define TB_STRING(f) {lk::f, [](const json& v, Config& c, Problems& p) { read_string(v, lk::f, c.f, p); }, [](const Config& c) { return json(c.f); }}
#define TB_OPT_INT(f) {lk::f, [](const json& v, Config& c, Problems& p) { read_optional<int64_t>(v, lk::f, c.f, p, read_int); }, [](const Config& c) { return opt(c.f); }}
#define TB_OPT_DOUBLE(f) {lk::f, [](const json& v, Config& c, Problems& p) { read_optional<double>(v, lk::f, c.f, p, read_double); }, [](const Config& c) { return opt(c.f); }}
#define TB_LIST(f) {lk::f, [](const json& v, Config& c, Problems& p) { read_int_list(v, lk::f, c.f, p); }, [](const Config& c) { return c.f.empty() ? json(nullptr) : json(c.f); }}
#define TB_UNSUPPORTED(f, what) {lk::f, [](const json& v, Config&, Problems& p) { read_unsupported(v, lk::f, what, p); }, nullptr}

const std::vector<Field>& fields() {
  static const std::vector<Field> table = {
      TB_STRING(name),
      {lk::hf_config,
       [](const json& v, Config& c, Problems& p) {
         if (!v.is_object() || !v.contains(lk::org) || !v.contains(lk::name) || !v[lk::org].is_string() ||
             !v[lk::name].is_string()) {
           p.push_back("hf_config must be a table/object with string keys org and name");
           return;
         }
         c.hf = v[lk::org].get<std::string>() + "/" + v[lk::name].get<std::string>();
         if (c.name.empty()) c.name = v[lk::name].get<std::string>();
       },
       nullptr},
      TB_STRING(hf),
      TB_INT(block_size),
      TB_INT(n_layer),
      TB_INT(n_embd),
      TB_INT(vocab_size),
      TB_INT(padding_multiple),
      TB_OPT_INT(padded_vocab_size),
      TB_STRING(norm_class_name),
      TB_DOUBLE(norm_eps),
      TB_BOOL(norm_qk),
      TB_STRING(norm_qk_type),
      TB_BOOL(post_attention_norm),
      TB_BOOL(post_mlp_norm),
      TB_BOOL(parallel_residual),
      TB_BOOL(shared_attention_norm),
      TB_INT(n_head),
      TB_OPT_INT(head_size),
      TB_OPT_INT(n_query_groups),
      TB_BOOL(attn_bias),
      TB_OPT_DOUBLE(attention_scores_scalar),
      TB_OPT_INT(sliding_window_size),
      TB_LIST(sliding_window_indices),
      TB_OPT_DOUBLE(attention_logit_softcapping),
      TB_DOUBLE(rope_base),
      TB_DOUBLE(rotary_percentage),
      TB_INT(rope_condense_ratio),
      {lk::rope_adjustments,
       [](const json& v, Config& c, Problems& p) { read_rope_adjustments(v, c.rope_adjustments, p); },
       [](const Config& c) -> json {
         if (!c.rope_adjustments) return nullptr;
         json out = {{lk::factor, c.rope_adjustments->factor}};
         if (c.rope_adjustments->low_freq_factor) out[lk::low_freq_factor] = *c.rope_adjustments->low_freq_factor;
         if (c.rope_adjustments->high_freq_factor) out[lk::high_freq_factor] = *c.rope_adjustments->high_freq_factor;
         if (c.rope_adjustments->original_max_seq_len)
           out[lk::original_max_seq_len] = *c.rope_adjustments->original_max_seq_len;
         return out;
       }},
      TB_UNSUPPORTED(rope_interleave, "interleaved RoPE (DeepSeek multi-head latent attention)"),
      TB_OPT_INT(intermediate_size),
      TB_OPT_INT(moe_intermediate_size),
      TB_BOOL(bias),
      TB_STRING(mlp_class_name),
      TB_STRING(gelu_approximate),
      TB_INT(n_expert),
      TB_UNSUPPORTED(n_shared_expert, "shared experts"),
      TB_UNSUPPORTED(n_expert_groups, "grouped expert routing"),
      TB_UNSUPPORTED(n_topk_groups, "grouped expert routing"),
      TB_UNSUPPORTED(n_topk_scores_per_group, "grouped expert routing"),
      TB_INT(n_expert_per_token),
      TB_UNSUPPORTED(first_k_dense_replace, "dense-then-MoE layer mixes"),
      TB_UNSUPPORTED(routed_scaling_factor, "a routed scaling factor other than 1"),
      TB_UNSUPPORTED(norm_topk_prob, "top-k probability renormalisation (grouped router)"),
      TB_BOOL(scale_embeddings),
      TB_BOOL(lm_head_bias),
      TB_OPT_DOUBLE(final_logit_softcapping),
      TB_BOOL(norm_1),
      TB_BOOL(norm_2),
      TB_UNSUPPORTED(latent_attention, "multi-head latent attention"),
      TB_OPT_DOUBLE(rope_local_base_freq),
      TB_LIST(rope_indices),
  };
  return table;
}

#undef TB_INT
#undef TB_DOUBLE
#undef TB_BOOL
#undef TB_STRING
#undef TB_OPT_INT
#undef TB_OPT_DOUBLE
#undef TB_LIST
#undef TB_UNSUPPORTED

}  // namespace

std::vector<std::string> config_field_names() {
  std::vector<std::string> names;
  for (const auto& field : fields()) names.emplace_back(field.name);
  return names;
}

void config_from_json(const json& object, Config& config, Problems& problems,
                      const std::vector<std::string>& ignored) {
  if (!object.is_object()) {
    problems.push_back(fmt::format("a model config must be a table/object of litgpt fields, got {}",
                                   type_name(object)));
    return;
  }
  const std::set<std::string> skip(ignored.begin(), ignored.end());
  std::vector<std::string> unknown;
  // Read in table order so hf_config sees an explicit name first.
  for (const auto& field : fields()) {
    auto it = object.find(field.name);
    if (it != object.end()) field.read(*it, config, problems);
  }
  for (const auto& [key, value] : object.items()) {
    if (skip.count(key)) continue;
    bool known = false;
    for (const auto& field : fields()) known = known || key == field.name;
    if (!known) unknown.push_back(key);
  }
  if (!unknown.empty()) {
    std::string valid;
    for (const auto& field : fields()) valid += (valid.empty() ? "" : ", ") + std::string(field.name);
    std::string names;
    for (const auto& key : unknown) names += (names.empty() ? "" : ", ") + key;
    problems.push_back(fmt::format("unknown field{} {} (valid fields: {})", unknown.size() > 1 ? "s" : "",
                                   names, valid));
  }
}

json config_to_json(const Config& config) {
  json out = json::object();
  for (const auto& field : fields()) {
    if (field.write) out[field.name] = field.write(config);
  }
  out[lk::rope_n_elem] = config.rope_n_elem;
  return out;
}

}  // namespace tokbench::model
