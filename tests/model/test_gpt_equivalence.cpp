// The GPT module computes what litgpt computes: for a tiny 2-layer model of each family, with
// weights, input, logits, loss and every gradient produced by real litgpt (scripts/reference/
// litgpt_reference.py), the module matches in fp32 on the CPU. Tolerance, elementwise as
// torch.allclose: |got - want| <= atol + rtol·|want| with rtol 1e-5 (logits, loss) or 1e-4
// (gradients) and atol = 1e-6 · max|want| (so exact zeros and tiny entries do not dominate).
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <string>
#include <vector>

#include "model/config_json.hpp"
#include "model/gpt.hpp"
#include "test_gpt_support.hpp"

namespace tokbench::model {
namespace {

using testing::fixtures_dir;
using testing::read_blob;
using testing::read_json;

struct Fixture {
  nlohmann::json doc;
  std::map<std::string, torch::Tensor> tensors;
  Config config;
};

Fixture load_fixture(const std::string& family) {
  Fixture f;
  const auto dir = fixtures_dir() / "model" / "equivalence";
  f.doc = read_json(dir / (family + ".json"));
  f.tensors = read_blob(f.doc.at("tensors"), dir / (family + ".bin"));
  std::vector<std::string> problems;
  config_from_json(f.doc.at("config"), f.config, problems);
  for (const auto& p : problems) ADD_FAILURE() << family << ": " << p;
  f.config.finalize();
  return f;
}

std::map<std::string, torch::Tensor> with_prefix(const std::map<std::string, torch::Tensor>& all,
                                                 const std::string& prefix) {
  std::map<std::string, torch::Tensor> out;
  for (const auto& [name, t] : all)
    if (name.rfind(prefix, 0) == 0) out.emplace(name.substr(prefix.size()), t);
  return out;
}

// torch.allclose semantics with atol scaled to the reference's magnitude; returns a message
// naming the worst element when it fails.
::testing::AssertionResult close(const torch::Tensor& got, const torch::Tensor& want, double rtol) {
  if (got.sizes() != want.sizes())
    return ::testing::AssertionFailure() << "shape " << got.sizes() << " vs " << want.sizes();
  const double atol = 1e-6 * std::max(want.abs().max().item<double>(), 1e-30);
  auto excess = (got - want).abs() - (atol + rtol * want.abs());
  const double worst = excess.max().item<double>();
  if (worst <= 0) return ::testing::AssertionSuccess();
  const int64_t at = excess.flatten().argmax().item<int64_t>();
  return ::testing::AssertionFailure() << "element " << at << ": got " << got.flatten()[at].item<double>()
                                       << ", want " << want.flatten()[at].item<double>() << " (rtol " << rtol
                                       << ", atol " << atol << ")";
}

struct Outcome {
  torch::Tensor logits, loss;
  GPT model{nullptr};
};

Outcome run(const Fixture& f, const std::map<std::string, torch::Tensor>& params) {
  Outcome o;
  o.model = GPT(f.config, torch::TensorOptions().dtype(torch::kFloat));
  o.model->load_state(params);
  o.logits = o.model->forward(f.tensors.at("input"));  // (B, T, V_pad)
  o.loss = torch::nn::functional::cross_entropy(o.logits.reshape({-1, o.logits.size(-1)}),
                                                f.tensors.at("targets").reshape({-1}));
  o.loss.backward();
  return o;
}

class GptEquivalence : public ::testing::TestWithParam<std::string> {};

TEST_P(GptEquivalence, LogitsLossAndGradientsMatchLitgpt) {
  const Fixture f = load_fixture(GetParam());
  auto o = run(f, with_prefix(f.tensors, "param/"));

  // Same parameter names in the same order as litgpt's named_parameters().
  std::vector<std::string> names;
  for (const auto& item : o.model->named_parameters()) names.push_back(item.key());
  EXPECT_EQ(names, f.doc.at("parameters").get<std::vector<std::string>>());

  EXPECT_TRUE(close(o.logits, f.tensors.at("logits"), 1e-5)) << "logits";
  EXPECT_TRUE(close(o.loss, f.tensors.at("loss"), 1e-5)) << "loss";
  const auto grads = with_prefix(f.tensors, "grad/");
  for (const auto& item : o.model->named_parameters()) {
    auto grad = item.value().grad();
    if (!grad.defined()) grad = torch::zeros_like(item.value());
    EXPECT_TRUE(close(grad, grads.at(item.key()), 1e-4)) << "grad of " << item.key();
  }
}

// The fixtures can tell a wrong model from a right one: permuting heads inside the fused
// qkv weight (a wrong Q/K/V split or head layout) must break the logits match.
TEST_P(GptEquivalence, WrongQkvLayoutIsDetected) {
  const Fixture f = load_fixture(GetParam());
  auto params = with_prefix(f.tensors, "param/");
  auto& qkv = params.at("transformer.h.0.attn.qkv.weight");  // ((nh + 2·ng)·hs, C)
  const int64_t hs = f.config.hs();
  qkv = torch::cat({qkv.slice(0, hs), qkv.slice(0, 0, hs)}, 0);  // rotate by one head
  if (params.count("transformer.h.0.attn.qkv.bias")) {
    auto& b = params.at("transformer.h.0.attn.qkv.bias");
    b = torch::cat({b.slice(0, hs), b.slice(0, 0, hs)}, 0);
  }
  auto o = run(f, params);
  EXPECT_FALSE(close(o.logits, f.tensors.at("logits"), 1e-5));
}

// ... and so can a wrong rotary embedding: shifting the positions of the rope cache by one.
TEST_P(GptEquivalence, WrongRopeIsDetected) {
  const Fixture f = load_fixture(GetParam());
  if (f.config.rope_n_elem == 0) GTEST_SKIP() << "no rotary channels";
  Outcome o;
  o.model = GPT(f.config, torch::TensorOptions().dtype(torch::kFloat));
  o.model->load_state(with_prefix(f.tensors, "param/"));
  {
    torch::NoGradGuard no_grad;
    for (auto& item : o.model->named_buffers()) {  // cos, sin: (block_size, n[, 2])
      auto shifted = item.value().roll(1, 0);
      item.value().copy_(shifted);
    }
  }
  auto logits = o.model->forward(f.tensors.at("input"));
  EXPECT_FALSE(close(logits, f.tensors.at("logits"), 1e-5));
}

INSTANTIATE_TEST_SUITE_P(Families, GptEquivalence,
                         ::testing::Values("pythia", "phi-2", "llama-2", "llama-3.1", "mistral", "gemma-2",
                                           "gemma-3", "qwen3", "qwen2.5", "olmo-2", "olmo", "falcon",
                                           "mixtral", "qwen3-moe"),
                         [](const auto& info) { return testing::test_name(info.param); });

}  // namespace
}  // namespace tokbench::model
