// --model-config files: TOML and JSON produce the same finalized Config as the catalog for the
// same fields, and bad files fail with one message that names every bad field.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "model/catalog.hpp"
#include "model/config_json.hpp"
#include "model/counting.hpp"

namespace tokbench::model {
namespace {

// Files go straight into the temp directory with unique names and are removed one by one:
// libtorch.so exports its own std::filesystem::remove_all, which crashes when the test binary
// binds to it, so this fixture avoids filesystem operations beyond paths.
class ModelConfigFile : public ::testing::Test {
 protected:
  void SetUp() override {
    prefix_ = "tokbench_model_config_" + std::to_string(::getpid()) + "_" +
              ::testing::UnitTest::GetInstance()->current_test_info()->name() + "_";
  }
  void TearDown() override {
    for (const auto& path : written_) std::remove(path.c_str());
  }
  std::filesystem::path write(const std::string& file, const std::string& text) {
    const auto path = std::filesystem::temp_directory_path() / (prefix_ + file);
    std::ofstream(path) << text;
    written_.push_back(path.string());
    return path;
  }
  // The message of the std::invalid_argument that loading `path` throws ("" if none).
  static std::string error_of(const std::filesystem::path& path) {
    try {
      load_model_config(path);
    } catch (const std::invalid_argument& e) {
      return e.what();
    }
    return "";
  }
  std::string prefix_;
  std::vector<std::string> written_;
};

constexpr const char* kLlamaLikeJson = R"({
  "name": "tiny-llama-like", "block_size": 256, "n_layer": 2, "n_embd": 128, "n_head": 4,
  "n_query_groups": 2, "vocab_size": 1000, "padding_multiple": 64,
  "norm_class_name": "RMSNorm", "parallel_residual": false, "bias": false,
  "mlp_class_name": "LLaMAMLP", "intermediate_size": 344, "rotary_percentage": 1.0
})";

TEST_F(ModelConfigFile, JsonIsFinalizedWithLitgptRules) {
  const Config c = load_model_config(write("m.json", kLlamaLikeJson));
  EXPECT_EQ(c.name, "tiny-llama-like");
  EXPECT_EQ(c.hs(), 32);
  EXPECT_EQ(c.vocab(), 1024);  // 1000 rounded up to a multiple of 64
  EXPECT_EQ(c.groups(), 2);
  EXPECT_EQ(c.rope_n_elem, 32);
  // 2·V·C + ln_f + 2 blocks of (2 norms + qkv + proj + gated MLP).
  const int64_t block = 2 * 128 + 128 * (4 + 2 * 2) * 32 + 128 * 128 + 3 * 128 * 344;
  EXPECT_EQ(count_params(c).total, 2 * 1024 * 128 + 128 + 2 * block);
}

#ifdef TOKBENCH_HAVE_TOMLPLUSPLUS
TEST_F(ModelConfigFile, TomlGivesTheSameConfigAsJson) {
  const Config from_json = load_model_config(write("m.json", kLlamaLikeJson));
  const Config from_toml = load_model_config(write("m.toml", R"(
name = "tiny-llama-like"
block_size = 256
n_layer = 2
n_embd = 128
n_head = 4
n_query_groups = 2
vocab_size = 1000
padding_multiple = 64
norm_class_name = "RMSNorm"
parallel_residual = false
bias = false
mlp_class_name = "LLaMAMLP"
intermediate_size = 344
rotary_percentage = 1.0
)"));
  EXPECT_EQ(config_to_json(from_toml), config_to_json(from_json));
}

TEST_F(ModelConfigFile, TomlRopeAdjustmentsTable) {
  const auto path = write("r.toml", R"(
n_layer = 1
n_embd = 64
n_head = 2
mlp_class_name = "LLaMAMLP"
intermediate_size = 128
[rope_adjustments]
factor = 8.0
low_freq_factor = 1.0
high_freq_factor = 4.0
original_max_seq_len = 8192
)");
  const Config c = load_model_config(path);
  ASSERT_TRUE(c.rope_adjustments.has_value());
  EXPECT_TRUE(c.rope_adjustments->is_llama3());
  EXPECT_EQ(c.rope_adjustments->original_max_seq_len, 8192);
  EXPECT_EQ(c.name, path.stem().string());  // no name: the file's stem
}

TEST_F(ModelConfigFile, TomlSyntaxErrorNamesTheLine) {
  const std::string error = error_of(write("bad.toml", "n_layer = 2\nn_embd = = 3\n"));
  EXPECT_NE(error.find("line 2"), std::string::npos) << error;
}
#endif

TEST_F(ModelConfigFile, EveryInvalidFieldIsNamedInOneError) {
  const std::string error = error_of(write("bad.json", R"({
    "n_layer": "two", "n_embd": 100, "n_head": 3, "norm_class_name": "BatchNorm",
    "mlp_class_name": "LLaMAMLP", "bias": 1, "n_layers": 4
  })"));
  for (const char* field : {"n_layer", "n_embd=100", "norm_class_name", "intermediate_size", "bias",
                            "unknown field n_layers", "valid fields:"})
    EXPECT_NE(error.find(field), std::string::npos) << field << " missing from: " << error;
  EXPECT_EQ(error.find('\n'), std::string::npos) << "one line: " << error;
}

TEST_F(ModelConfigFile, UnsupportedFeaturesAreRejectedClearly) {
  struct Case {
    const char* json;
    const char* expected;
  };
  const Case cases[] = {
      {R"({"latent_attention": {"q_lora_rank": 8}})", "multi-head latent attention is not supported"},
      {R"({"n_shared_expert": 2})", "shared experts is not supported"},
      {R"({"n_expert_groups": 4})", "grouped expert routing is not supported"},
      {R"({"first_k_dense_replace": 1})", "first_k_dense_replace"},
      {R"({"rope_adjustments": {"factor": 4.0, "beta_fast": 32, "beta_slow": 1, "original_max_seq_len": 4096}})",
       "YaRN"},
  };
  for (const auto& c : cases) {
    const std::string error = error_of(write("u.json", c.json));
    EXPECT_NE(error.find(c.expected), std::string::npos) << c.json << " -> " << error;
  }
}

TEST_F(ModelConfigFile, FullLitgptDumpWithOffFeaturesLoads) {
  // A litgpt asdict() dump carries every field, unsupported ones at their off value.
  const Config c = load_model_config(write("dump.json", R"({
    "name": "dump", "n_layer": 2, "n_embd": 64, "n_head": 4, "latent_attention": null,
    "n_shared_expert": null, "first_k_dense_replace": null, "routed_scaling_factor": 1.0,
    "norm_topk_prob": false, "rope_interleave": false, "hf_config": {"org": "o", "name": "n"}
  })"));
  EXPECT_EQ(c.name, "dump");
  EXPECT_EQ(c.hf, "o/n");
}

TEST_F(ModelConfigFile, ParamCountIsChecked) {
  EXPECT_EQ(error_of(write("ok.json", R"({"n_layer": 1, "n_embd": 64, "n_head": 4, "vocab_size": 512,
    "param_count": 115648})")), "");
  const std::string error = error_of(write("wrong.json", R"({"n_layer": 1, "n_embd": 64, "n_head": 4,
    "vocab_size": 512, "param_count": 1})"));
  EXPECT_NE(error.find("param_count"), std::string::npos) << error;
}

TEST_F(ModelConfigFile, MissingFileAndBadJson) {
  EXPECT_NE(error_of(std::filesystem::temp_directory_path() / (prefix_ + "absent.json")).find("cannot read"), std::string::npos);
  EXPECT_NE(error_of(write("x.json", "{\"n_layer\": ")).find("JSON syntax error"), std::string::npos);
  EXPECT_NE(error_of(write("y.json", "[1, 2]")).find("table/object"), std::string::npos);
}

TEST_F(ModelConfigFile, CatalogEntryRoundTripsThroughAFile) {
  // Writing a catalog config out and reading it back reproduces it exactly.
  for (const char* name : {"Gemma-3-1b-it", "Mixtral-8x7B-v0.1", "phi-2", "Llama-3.1-8B", "OLMo-2-1124-7B"}) {
    const Config original = config_by_name(name);
    nlohmann::json fields = config_to_json(original);
    fields.erase("rope_n_elem");  // derived, not a litgpt field
    const Config loaded = load_model_config(write("rt.json", fields.dump()));
    EXPECT_EQ(config_to_json(loaded), config_to_json(original)) << name;
    EXPECT_EQ(count_params(loaded).total, find_entry(name)->param_count) << name;
  }
}

}  // namespace
}  // namespace tokbench::model
