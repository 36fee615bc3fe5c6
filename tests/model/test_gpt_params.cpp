// The GPT module's structure: built on the meta device, its parameter count equals the
// closed-form count and litgpt's figure for every catalog config; names follow litgpt; the
// meta build of the largest config is timed (reported, never asserted: docs/benchmarks.md, "Benchmarks
// (speed is measured side by side, never asserted in tests)"). Also the seeded
// initialisation. (Forward on meta is not a C++ use: several ATen ops, e.g. index_select,
// have their meta kernels only in Python.)
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <chrono>
#include <iostream>

#include "model/catalog.hpp"
#include "model/counting.hpp"
#include "model/gpt.hpp"

namespace tokbench::model {
namespace {

const torch::TensorOptions kMeta = torch::TensorOptions().device(torch::kMeta).dtype(torch::kBFloat16);

int64_t numel_of(GPT& model) {
  int64_t n = 0;
  for (const auto& p : model->parameters()) n += p.numel();
  return n;
}

TEST(GptParams, MetaModelMatchesCountAndCatalogForAllConfigs) {
  ASSERT_EQ(catalog().size(), 210u);
  for (const auto& entry : catalog()) {
    GPT model(entry.config, kMeta);
    const int64_t built = numel_of(model);
    EXPECT_EQ(built, count_params(entry.config).total) << entry.config.name;
    EXPECT_EQ(built, entry.param_count) << entry.config.name;
  }
}

TEST(GptParams, LargestConfigBuildsOnMetaQuickly) {
  const CatalogEntry* largest = &catalog().front();
  for (const auto& entry : catalog())
    if (entry.param_count > largest->param_count) largest = &entry;
  const auto start = std::chrono::steady_clock::now();
  GPT model(largest->config, kMeta);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(numel_of(model), largest->param_count);
  EXPECT_TRUE(model->parameters().front().is_meta());
  // Reported, not asserted: timing belongs to benchmarks (docs/benchmarks.md, "Benchmarks (speed is
  // measured side by side, never asserted in tests)").
  std::cout << "[ meta build ] " << largest->config.name << " (" << largest->param_count
            << " params, block_size " << largest->config.block_size << "): " << seconds << " s\n";
  RecordProperty("meta_build_seconds", std::to_string(seconds));
}

TEST(GptParams, NamesAreLitgptStateDictKeys) {
  auto config = config_by_name("phi-2");
  config.n_layer = 1;
  GPT phi(config, kMeta);
  std::vector<std::string> names;
  for (const auto& item : phi->named_parameters()) names.push_back(item.key());
  const std::vector<std::string> expected = {
      "lm_head.weight", "lm_head.bias", "transformer.wte.weight",
      "transformer.h.0.norm_1.weight", "transformer.h.0.norm_1.bias",
      "transformer.h.0.attn.qkv.weight", "transformer.h.0.attn.qkv.bias",
      "transformer.h.0.attn.proj.weight", "transformer.h.0.attn.proj.bias",
      "transformer.h.0.mlp.fc.weight", "transformer.h.0.mlp.fc.bias",
      "transformer.h.0.mlp.proj.weight", "transformer.h.0.mlp.proj.bias",
      "transformer.ln_f.weight", "transformer.ln_f.bias"};
  EXPECT_EQ(names, expected);

  auto moe = with_overrides(config_by_name("Qwen3-30B-A3B"), {.n_layer = 1, .seq_len = 64});
  GPT qwen(moe, kMeta);
  auto params = qwen->named_parameters();
  for (const char* key : {"transformer.h.0.attn.norm_q.weight", "transformer.h.0.attn.norm_k.weight",
                          "transformer.h.0.mlp.gate.weight", "transformer.h.0.mlp.experts.127.fc_1.weight",
                          "transformer.h.0.mlp.experts.0.fc_2.weight", "transformer.h.0.mlp.experts.5.proj.weight",
                          "transformer.h.0.norm_2.weight"})
    EXPECT_NE(params.find(key), nullptr) << key;
}

Config tiny_llama() {
  Config c;
  c.name = "tiny";
  c.n_layer = 2;
  c.n_embd = 32;
  c.n_head = 4;
  c.n_query_groups = 2;
  c.block_size = 16;
  c.padded_vocab_size = 64;
  c.vocab_size = 64;
  c.norm_class_name = "RMSNorm";
  c.mlp_class_name = "LLaMAMLP";
  c.intermediate_size = 48;
  c.parallel_residual = false;
  c.bias = false;
  c.rotary_percentage = 1.0;
  c.finalize();
  return c;
}

TEST(GptInit, SeededInitIsDeterministicAndShaped) {
  const auto cpu = torch::TensorOptions().dtype(torch::kFloat);
  GPT a(tiny_llama(), cpu), b(tiny_llama(), cpu), c(tiny_llama(), cpu);
  a->reset_parameters(7);
  b->reset_parameters(7);
  c->reset_parameters(8);
  auto pa = a->named_parameters(), pb = b->named_parameters(), pc = c->named_parameters();
  for (const auto& item : pa) {
    const auto& name = item.key();
    EXPECT_TRUE(torch::equal(item.value(), pb[name])) << name;
    if (item.value().dim() == 1) {
      EXPECT_TRUE(torch::all(item.value() == 1).item<bool>()) << name;  // RMSNorm weights
    } else {
      EXPECT_FALSE(torch::equal(item.value(), pc[name])) << name;
      const double std = item.value().std().item<double>();
      EXPECT_NEAR(std, 0.02, 0.004) << name;
    }
  }
  auto idx = torch::randint(0, 64, {2, 16}, torch::kLong);
  auto logits = a->forward(idx);
  EXPECT_EQ(logits.sizes(), (std::vector<int64_t>{2, 16, 64}));
  EXPECT_TRUE(torch::isfinite(logits).all().item<bool>());
  EXPECT_THROW(a->forward(torch::zeros({1, 17}, torch::kLong)), c10::Error);  // T > block_size
}

// The record's attention_kernel is the dispatcher's choice for the model's own calls: it
// follows what PyTorch may use (flash on this CPU, math once flash is turned off), and a
// soft-capped model says that its scores are computed explicitly.
TEST(GptAttentionKernel, NamesTheKernelTheDispatcherChose) {
  const auto cpu = torch::TensorOptions().dtype(torch::kFloat);
  auto idx = torch::randint(0, 64, {2, 16}, torch::kLong);
  GPT before(tiny_llama(), cpu);
  EXPECT_EQ(before->attention_kernels(), "");  // no forward yet
  before->forward(idx);
  EXPECT_EQ(before->attention_kernels(), "flash_attention");

  auto& context = at::globalContext();
  context.setSDPUseFlash(false);
  GPT without_flash(tiny_llama(), cpu);
  without_flash->forward(idx);
  context.setSDPUseFlash(true);
  EXPECT_EQ(without_flash->attention_kernels(), "math");

  Config capped = tiny_llama();
  capped.attention_logit_softcapping = 50.0;
  GPT soft(capped, cpu);
  soft->forward(idx);
  EXPECT_EQ(soft->attention_kernels(), "explicit (soft-capping)");
}

}  // namespace
}  // namespace tokbench::model
