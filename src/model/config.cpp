// Config::finalize(): litgpt's Config.__post_init__ (docs/litgpt-architecture.md, "Derived
// fields (`__post_init__`)") in the same order, plus the checks tokbench's model relies on.
// Every problem found is reported in one std::invalid_argument so a user fixing a config file
// sees all of them at once.
#include "model/config.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "model/litgpt_keys.hpp"

namespace tokbench::model {
namespace {

int64_t find_multiple(int64_t n, int64_t k) { return n % k == 0 ? n : n + k - n % k; }

// litgpt: a list of 0/1 per layer, cut to n_layer; None means "every layer" ([1]*n_layer).
void derive_layer_list(std::vector<int>& list, const char* field, int64_t n_layer,
                       std::vector<std::string>& problems) {
  if (list.empty()) {
    list.assign(static_cast<std::size_t>(n_layer), 1);
    return;
  }
  for (std::size_t i = 0; i < list.size(); ++i) {
    if (list[i] != 0 && list[i] != 1) {
      problems.push_back(fmt::format("{}[{}]={} must be 0 or 1", field, i, list[i]));
      return;
    }
  }
  if (static_cast<int64_t>(list.size()) < n_layer) {
    // litgpt would index past the end in the forward pass; tokbench refuses up front.
    problems.push_back(fmt::format("{} has {} entries but n_layer={}", field, list.size(), n_layer));
    return;
  }
  list.resize(static_cast<std::size_t>(n_layer));
}

}  // namespace

void Config::finalize() {
  std::vector<std::string> problems;
  auto require_positive = [&](const char* field, int64_t value) {
    if (value <= 0) problems.push_back(fmt::format("{}={} must be positive", field, value));
    return value > 0;
  };
  require_positive(litgpt_key::block_size, block_size);
  const bool layers_ok = require_positive(litgpt_key::n_layer, n_layer);
  const bool embd_ok = require_positive(litgpt_key::n_embd, n_embd);
  require_positive(litgpt_key::vocab_size, vocab_size);
  const bool multiple_ok = require_positive(litgpt_key::padding_multiple, padding_multiple);
  const bool head_ok = require_positive(litgpt_key::n_head, n_head);
  require_positive(litgpt_key::rope_condense_ratio, rope_condense_ratio);
  if (norm_eps <= 0) problems.push_back(fmt::format("norm_eps={} must be positive", norm_eps));
  if (!(rotary_percentage >= 0.0 && rotary_percentage <= 1.0))
    problems.push_back(fmt::format("rotary_percentage={} must be in [0, 1]", rotary_percentage));
  if (rope_base <= 0) problems.push_back(fmt::format("rope_base={} must be positive", rope_base));

  // 2. head_size = n_embd // n_head unless given.
  if (!head_size) {
    if (embd_ok && head_ok) {
      if (n_embd % n_head != 0)
        problems.push_back(fmt::format(
            "n_embd={} is not divisible by n_head={} (set head_size explicitly)", n_embd, n_head));
      else
        head_size = n_embd / n_head;
    }
  } else if (*head_size <= 0) {
    problems.push_back(fmt::format("head_size={} must be positive", *head_size));
  }
  // 3. padded vocabulary: round up, or clamp vocab_size to an explicit padded size.
  if (!padded_vocab_size) {
    if (multiple_ok && vocab_size > 0) padded_vocab_size = find_multiple(vocab_size, padding_multiple);
  } else if (*padded_vocab_size <= 0) {
    problems.push_back(fmt::format("padded_vocab_size={} must be positive", *padded_vocab_size));
  } else {
    vocab_size = std::min(vocab_size, *padded_vocab_size);
  }
  // 4. grouped-query attention: n_head must split evenly into groups.
  if (!n_query_groups) {
    n_query_groups = n_head;
  } else if (*n_query_groups <= 0) {
    problems.push_back(fmt::format("n_query_groups={} must be positive", *n_query_groups));
  } else if (head_ok && n_head % *n_query_groups != 0) {
    problems.push_back(fmt::format("n_head={} is not divisible by n_query_groups={}", n_head,
                                   *n_query_groups));
  }
  // 5. MLP width: LLaMAMLP has no sensible default, the others get 4·C.
  if (!intermediate_size) {
    if (mlp_class_name == "LLaMAMLP")
      problems.push_back("intermediate_size must be set when mlp_class_name=LLaMAMLP");
    else
      intermediate_size = 4 * n_embd;
  } else if (*intermediate_size <= 0) {
    problems.push_back(fmt::format("intermediate_size={} must be positive", *intermediate_size));
  }
  if (moe_intermediate_size && *moe_intermediate_size <= 0)
    problems.push_back(fmt::format("moe_intermediate_size={} must be positive", *moe_intermediate_size));

  // 6. rope_n_elem = int(rotary_percentage * head_size): float multiply, then truncate.
  if (head_size && *head_size > 0)
    rope_n_elem = static_cast<int64_t>(rotary_percentage * static_cast<double>(*head_size));
  if (rope_n_elem % 2 != 0)
    problems.push_back(fmt::format("rotary_percentage={} × head_size={} gives an odd rope_n_elem={}",
                                   rotary_percentage, head_size.value_or(0), rope_n_elem));

  // 7. per-layer lists.
  if (sliding_window_size) {
    if (*sliding_window_size <= 0)
      problems.push_back(fmt::format("sliding_window_size={} must be positive", *sliding_window_size));
    if (layers_ok) derive_layer_list(sliding_window_indices, litgpt_key::sliding_window_indices, n_layer, problems);
  }
  if (rope_local_base_freq) {
    if (*rope_local_base_freq <= 0)
      problems.push_back(fmt::format("rope_local_base_freq={} must be positive", *rope_local_base_freq));
    if (layers_ok) derive_layer_list(rope_indices, litgpt_key::rope_indices, n_layer, problems);
  }

  // Choices and combinations tokbench's model implements.
  if (norm_class_name != "LayerNorm" && norm_class_name != "RMSNorm")
    problems.push_back(fmt::format("norm_class_name='{}' must be one of LayerNorm, RMSNorm", norm_class_name));
  if (norm_qk_type != "default" && norm_qk_type != "olmo2")
    problems.push_back(fmt::format("norm_qk_type='{}' must be one of default, olmo2", norm_qk_type));
  if (gelu_approximate != "none" && gelu_approximate != "tanh")
    problems.push_back(fmt::format("gelu_approximate='{}' must be one of none, tanh", gelu_approximate));
  const bool moe = mlp_class_name == "LLaMAMoE";
  if (mlp_class_name != "GptNeoxMLP" && mlp_class_name != "LLaMAMLP" && mlp_class_name != "GemmaMLP" && !moe)
    problems.push_back(fmt::format(
        "mlp_class_name='{}' must be one of GptNeoxMLP, LLaMAMLP, GemmaMLP, LLaMAMoE", mlp_class_name));
  if (moe) {
    if (n_expert <= 0) problems.push_back(fmt::format("n_expert={} must be positive for LLaMAMoE", n_expert));
    if (n_expert_per_token <= 0 || n_expert_per_token > n_expert)
      problems.push_back(fmt::format("n_expert_per_token={} must be in [1, n_expert={}] for LLaMAMoE",
                                     n_expert_per_token, n_expert));
  } else if (n_expert != 0 || n_expert_per_token != 0) {
    problems.push_back(fmt::format("n_expert={} / n_expert_per_token={} need mlp_class_name=LLaMAMoE",
                                   n_expert, n_expert_per_token));
  }
  if (!parallel_residual && shared_attention_norm)
    problems.push_back("shared_attention_norm=true requires parallel_residual=true (as in litgpt)");
  if (rope_adjustments && rope_adjustments->factor <= 0)
    problems.push_back(fmt::format("rope_adjustments.factor={} must be positive", rope_adjustments->factor));

  if (!problems.empty()) {
    std::string message = fmt::format("invalid model config '{}': ", name.empty() ? "(unnamed)" : name);
    for (std::size_t i = 0; i < problems.size(); ++i) message += (i ? "; " : "") + problems[i];
    throw std::invalid_argument(message);
  }
}

}  // namespace tokbench::model
