// The compiled-in catalog: 210 unique entries that agree with the reference's resolved fields,
// litgpt's lookup order, close-name suggestions for typos, and the n_layer / seq_len overrides
// (re-derived like from_name(**overrides), per-layer lists truncated or extended by pattern).
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>

#include "model/catalog.hpp"
#include "model/config_json.hpp"

namespace tokbench::model {
namespace {

TEST(Catalog, HasAll210UniqueFinalizedEntries) {
  const auto& entries = catalog();
  ASSERT_EQ(entries.size(), 210u);
  std::set<std::string> names;
  for (const auto& entry : entries) {
    EXPECT_TRUE(names.insert(entry.config.name).second) << "duplicate " << entry.config.name;
    EXPECT_TRUE(entry.config.head_size && entry.config.padded_vocab_size && entry.config.intermediate_size)
        << entry.config.name;
    EXPECT_FALSE(entry.config.hf.empty()) << entry.config.name;
    EXPECT_GT(entry.param_count, 0);
  }
  // Counts by MLP class and norm (docs/litgpt-architecture.md, "The catalog file").
  std::map<std::string, int> mlp, norm;
  for (const auto& entry : entries) {
    ++mlp[entry.config.mlp_class_name];
    ++norm[entry.config.norm_class_name];
  }
  EXPECT_EQ(mlp["LLaMAMLP"], 151);
  EXPECT_EQ(mlp["GptNeoxMLP"], 33);
  EXPECT_EQ(mlp["GemmaMLP"], 15);
  EXPECT_EQ(mlp["LLaMAMoE"], 11);
  EXPECT_EQ(norm["RMSNorm"], 171);
  EXPECT_EQ(norm["LayerNorm"], 39);
}

TEST(Catalog, ResolvedFieldsOfRepresentativeConfigs) {
  const Config falcon = config_by_name("falcon-7b");
  EXPECT_EQ(falcon.n_head, 71);
  EXPECT_EQ(falcon.groups(), 1);
  EXPECT_EQ(falcon.hs(), 64);
  EXPECT_TRUE(falcon.shared_attention_norm);
  const Config pythia = config_by_name("pythia-1b");
  EXPECT_EQ(pythia.n_layer, 16);  // litgpt default, not set by the config
  EXPECT_EQ(pythia.rope_n_elem, 64);
  const Config mistral = config_by_name("Mistral-7B-v0.1");
  EXPECT_EQ(mistral.vocab_size, 32000);  // min(50254, padded 32000)
  EXPECT_EQ(mistral.sliding_window_indices, std::vector<int>(32, 1));
  EXPECT_EQ(config_by_name("pythia-2.8b").rope_n_elem, 20);  // int(0.25 * 80)
  EXPECT_EQ(config_by_name("phi-2").rope_n_elem, 32);        // int(0.4 * 80)
  const Config llama31 = config_by_name("Llama-3.1-8B");
  ASSERT_TRUE(llama31.rope_adjustments.has_value());
  EXPECT_DOUBLE_EQ(llama31.rope_adjustments->factor, 8.0);
  EXPECT_EQ(llama31.block_size, 131072);
  const Config gemma3 = config_by_name("Gemma-3-1b-it");
  EXPECT_EQ(gemma3.rope_indices.size(), 26u);
  EXPECT_EQ(gemma3.rope_indices[5], 0);
  EXPECT_TRUE(gemma3.rmsnorm_unit_offset());
  EXPECT_TRUE(config_by_name("OLMo-1B-hf").layernorm_without_params());
}

TEST(Catalog, LookupFollowsLitgptOrder) {
  EXPECT_EQ(config_by_name("phi-2").name, "phi-2");
  EXPECT_EQ(config_by_name("microsoft/phi-2").name, "phi-2");
  EXPECT_EQ(config_by_name("Meta-Llama-3-8B").name, "Llama-3-8B");
  EXPECT_EQ(config_by_name("meta-llama/Meta-Llama-3-8B").name, "Llama-3-8B");
  EXPECT_EQ(config_by_name("gemma-2b").name, "Gemma-2b");
  EXPECT_EQ(config_by_name("TinyLlama-1.1B-intermediate-step-1431k-3T").name, "tiny-llama-1.1b");
  EXPECT_EQ(find_entry("Llama-2-7b"), nullptr);  // case and suffix matter, as in litgpt
  EXPECT_EQ(find_entry(""), nullptr);
}

TEST(Catalog, UnknownNameListsCloseNamesOnOneLine) {
  try {
    config_by_name("lama-2-7b");
    FAIL() << "expected UnknownModelError";
  } catch (const UnknownModelError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("'lama-2-7b'"), std::string::npos) << message;
    EXPECT_NE(message.find("Llama-2-7b-hf"), std::string::npos) << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  }
  // Case-insensitive substring hits come first.
  const auto close = closest_names("MIXTRAL-8X7B", 2);
  ASSERT_EQ(close.size(), 2u);
  for (const auto& name : close) EXPECT_NE(name.find("Mixtral-8x7B"), std::string::npos) << name;
  EXPECT_EQ(closest_names("pythia-14", 1).front(), "pythia-14m");
  EXPECT_EQ(closest_names("phi2", 1).front(), "phi-2");
}

TEST(Overrides, SeqLenReplacesBlockSize) {
  const Config c = with_overrides(config_by_name("Llama-3.1-8B"), {.n_layer = {}, .seq_len = 2048});
  EXPECT_EQ(c.block_size, 2048);
  EXPECT_EQ(c.n_layer, 32);
  EXPECT_EQ(c.rope_n_elem, 128);
}

TEST(Overrides, FewerLayersTruncatePerLayerLists) {
  const Config c = with_overrides(config_by_name("Gemma-2-2b"), {.n_layer = 3, .seq_len = {}});
  EXPECT_EQ(c.sliding_window_indices, (std::vector<int>{1, 0, 1}));
  const Config m = with_overrides(config_by_name("Mistral-7B-v0.1"), {.n_layer = 2, .seq_len = {}});
  EXPECT_EQ(m.sliding_window_indices, (std::vector<int>{1, 1}));
}

TEST(Overrides, MoreLayersRepeatThePattern) {
  const Config g3 = with_overrides(config_by_name("Gemma-3-1b-it"), {.n_layer = 32, .seq_len = {}});
  ASSERT_EQ(g3.sliding_window_indices.size(), 32u);
  ASSERT_EQ(g3.rope_indices.size(), 32u);
  for (std::size_t i = 0; i < 32; ++i) {
    EXPECT_EQ(g3.sliding_window_indices[i], (i % 6 == 5) ? 0 : 1) << i;  // 5 local, 1 global
    EXPECT_EQ(g3.rope_indices[i], (i % 6 == 5) ? 0 : 1) << i;
  }
  const Config m = with_overrides(config_by_name("Mistral-7B-v0.1"), {.n_layer = 40, .seq_len = {}});
  EXPECT_EQ(m.sliding_window_indices, std::vector<int>(40, 1));
}

TEST(Overrides, AmbiguousExtensionAndBadValuesThrow) {
  Config c = config_by_name("pythia-14m");
  c.n_layer = 3;
  c.sliding_window_size = 4;
  c.sliding_window_indices = {1, 0, 0};  // no period that repeats twice
  c.finalize();
  EXPECT_THROW(with_overrides(c, {.n_layer = 6, .seq_len = {}}), std::invalid_argument);
  EXPECT_THROW(with_overrides(config_by_name("phi-2"), {.n_layer = 0, .seq_len = {}}), std::invalid_argument);
  EXPECT_THROW(with_overrides(config_by_name("phi-2"), {.n_layer = {}, .seq_len = -5}), std::invalid_argument);
}

TEST(Finalize, IsIdempotentForEveryEntry) {
  for (const auto& entry : catalog()) {
    Config again = entry.config;
    again.finalize();
    EXPECT_EQ(config_to_json(again), config_to_json(entry.config)) << entry.config.name;
  }
}

TEST(Finalize, DerivesLitgptDefaults) {
  Config c;
  c.name = "x";
  c.n_embd = 256;
  c.n_head = 8;
  c.vocab_size = 1000;
  c.finalize();
  EXPECT_EQ(c.hs(), 32);
  EXPECT_EQ(c.groups(), 8);
  EXPECT_EQ(c.vocab(), 1024);  // next multiple of 512
  EXPECT_EQ(c.mlp_hidden(), 1024);
  EXPECT_EQ(c.rope_n_elem, 8);  // int(0.25 * 32)
}

TEST(Finalize, ReportsEveryProblemTogether) {
  Config c;
  c.name = "broken";
  c.n_embd = 100;
  c.n_head = 3;
  c.mlp_class_name = "LLaMAMLP";
  c.parallel_residual = false;
  c.shared_attention_norm = true;
  try {
    c.finalize();
    FAIL();
  } catch (const std::invalid_argument& e) {
    const std::string message = e.what();
    for (const char* part : {"broken", "n_embd=100", "intermediate_size", "shared_attention_norm"})
      EXPECT_NE(message.find(part), std::string::npos) << part << " in " << message;
  }
}

}  // namespace
}  // namespace tokbench::model
