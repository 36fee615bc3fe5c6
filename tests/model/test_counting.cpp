// Parameter and FLOP counts against litgpt's own numbers: param_count for every one of the 210
// catalog configs, the per-block split (docs/litgpt-architecture.md, "Fixed and per-block
// parameters"), and the FlopCounterMode figures of "FLOPs per micro-batch" there (train
// FLOPs = 3 × forward, attention over the full T×T square); the training-memory estimate and
// the training-precision names it is keyed by.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "model/catalog.hpp"
#include "model/counting.hpp"
#include "model/memory_estimate.hpp"
#include "model/train_precision.hpp"

namespace tokbench::model {
namespace {

TEST(CountParams, EqualsLitgptForEveryCatalogConfig) {
  ASSERT_EQ(catalog().size(), 210u);
  int mismatches = 0;
  for (const auto& entry : catalog()) {
    const ParamCounts counts = count_params(entry.config);
    EXPECT_EQ(counts.total, entry.param_count) << entry.config.name;
    mismatches += counts.total != entry.param_count;
    // The parts must add up to the total.
    int64_t sum = counts.embedding + counts.lm_head + counts.final_norm;
    for (int64_t block : counts.per_block) sum += block;
    EXPECT_EQ(sum, counts.total) << entry.config.name;
    EXPECT_EQ(static_cast<int64_t>(counts.per_block.size()), entry.config.n_layer);
  }
  EXPECT_EQ(mismatches, 0);
}

TEST(CountParams, GoldenValuesFromReference) {
  // litgpt's own counts (docs/litgpt-architecture.md, "Parameter count"), independent of the
  // catalog's param_count field.
  const std::pair<const char*, int64_t> golden[] = {
      {"pythia-14m", 14'067'712},        {"phi-2", 2'779'683'840},
      {"Llama-2-7b-hf", 6'738'415'616},  {"Llama-3-8B", 8'030'261'248},
      {"Mixtral-8x7B-v0.1", 46'702'792'704}, {"Gemma-2b", 3'030'460'416},
      {"falcon-7b", 7'217'189'760},      {"OLMo-1B-hf", 1'279'787'008},
      {"Qwen3-0.6B", 751'632'384},       {"Llama-3.1-405B", 405'853'388'800}};
  for (const auto& [name, params] : golden) EXPECT_EQ(count_params(config_by_name(name)).total, params) << name;
}

TEST(CountParams, FixedPlusPerBlockSplit) {
  // "Fixed and per-block parameters": fixed = wte + lm_head(+bias) + ln_f; phi-2 has lm_head
  // bias and a shared norm.
  const ParamCounts phi = count_params(config_by_name("phi-2"));
  EXPECT_EQ(phi.embedding + phi.lm_head + phi.final_norm, 262'200'320);
  EXPECT_EQ(phi.per_block.front(), 78'671'360);
  const ParamCounts mixtral = count_params(config_by_name("Mixtral-8x7B-v0.1"));
  EXPECT_EQ(mixtral.per_block.front(), 1'451'270'144);
  EXPECT_EQ(count_params(config_by_name("OLMo-1B-hf")).final_norm, 0);  // affine-free LayerNorm
}

TEST(CountParams, NLayerOverrideScalesBlocksOnly) {
  const Config two = with_overrides(config_by_name("Llama-2-7b-hf"), {.n_layer = 2, .seq_len = {}});
  EXPECT_EQ(count_params(two).total, 262'148'096 + 2 * 202'383'360);
}

TEST(CountParams, LinearWeightsMatchReferenceW) {
  // The W of "FLOPs per micro-batch": Σ in·out over every Linear including lm_head.
  EXPECT_EQ(count_params(config_by_name("pythia-14m")).linear_weights, 7'618'560);
  EXPECT_EQ(count_params(config_by_name("Llama-2-7b-hf")).linear_weights, 6'607'077'376);
  EXPECT_EQ(count_params(config_by_name("falcon-40b")).linear_weights, 41'301'311'488);
}

double relative(double a, double b) { return std::abs(a - b) / std::abs(b); }

TEST(CountFlops, MatchesFlopCounterTableOfReference) {
  struct Row {
    const char* name;
    int64_t T;
    double train_flops;  // "FLOPs per micro-batch" table, B=1, 7 significant digits
  };
  const Row rows[] = {{"pythia-14m", 512, 2.582014e10},   {"pythia-1b", 2048, 1.281081e13},
                      {"phi-2", 2048, 3.665755e13},       {"Llama-2-7b-hf", 4096, 1.887638e14},
                      {"Llama-2-70b-hf", 4096, 1.820637e15}, {"Mistral-7B-v0.1", 4096, 2.011333e14},
                      {"Gemma-2-2b", 8192, 1.713692e14},  {"falcon-7b", 2048, 9.236904e13},
                      {"OLMo-1B-hf", 2048, 1.610935e13},  {"Phi-3-mini-4k-instruct", 4096, 1.112724e14}};
  for (const auto& row : rows) {
    const FlopCounts flops = count_flops(config_by_name(row.name), 1, row.T);
    EXPECT_LT(relative(static_cast<double>(flops.total()), row.train_flops), 5e-7) << row.name;
    EXPECT_EQ(flops.backward, 2 * flops.forward) << row.name;
  }
  // The exact integer for Llama-2-7b (same table).
  EXPECT_EQ(count_flops(config_by_name("Llama-2-7b-hf"), 1, 4096).total(), 188'763'812'659'200);
}

TEST(CountFlops, LinearInMicroBatch) {
  const Config c = config_by_name("pythia-160m");
  EXPECT_EQ(count_flops(c, 4, 1024).forward, 4 * count_flops(c, 1, 1024).forward);
}

TEST(CountFlops, CausalHalvesOnlyAttention) {
  const Config c = config_by_name("Llama-2-7b-hf");
  const int64_t T = 4096;
  const int64_t attention = 4LL * T * T * 32 * 32 * 128;
  EXPECT_EQ(count_flops(c, 1, T, FlopConvention::matmul).forward -
                count_flops(c, 1, T, FlopConvention::causal).forward,
            attention / 2);
}

TEST(CountFlops, PalmIsSixNPlusAttention) {
  const Config c = config_by_name("Llama-2-7b-hf");
  const int64_t T = 2048, B = 2;
  const ParamCounts p = count_params(c);
  const int64_t n = p.total - p.embedding;  // non-embedding parameters, lm_head included
  const int64_t per_token = 6 * n + 12LL * 32 * 32 * 128 * T;
  const FlopCounts flops = count_flops(c, B, T, FlopConvention::palm);
  EXPECT_EQ(flops.total(), per_token * B * T);
  EXPECT_EQ(flops.forward * 3, flops.total());
}

TEST(CountFlops, MoeCountsRouterAndTopKExperts) {
  const Config c = config_by_name("Mixtral-8x7B-v0.1");
  const int64_t T = 128, C = 4096, I = 14336, L = 32;
  const int64_t attn_linear = C * (32 + 2 * 8) * 128 + 32 * 128 * C;
  const int64_t per_token = L * (attn_linear + C * 8 + 2 * 3 * C * I) + C * 32000;
  const int64_t attention = 4LL * T * T * L * 32 * 128;
  EXPECT_EQ(count_flops(c, 1, T).forward, 2 * T * per_token + attention);
  // palm's N uses 2 of the 8 experts too: far below 6·(all params).
  const int64_t palm = count_flops(c, 1, T, FlopConvention::palm).total();
  EXPECT_LT(palm, 6 * count_params(c).total * T / 3);
}

TEST(CountFlops, OverflowThrowsNamingTheConfig) {
  const Config c = config_by_name("Llama-3.1-405B");
  try {
    count_flops(c, 1'000'000, 1'000'000);
    FAIL() << "expected overflow";
  } catch (const std::overflow_error& e) {
    EXPECT_NE(std::string(e.what()).find("Llama-3.1-405B"), std::string::npos) << e.what();
  }
}

TEST(CountFlops, RejectsNonPositiveSizes) {
  const Config c = config_by_name("pythia-14m");
  EXPECT_THROW(count_flops(c, 0, 16), std::invalid_argument);
  EXPECT_THROW(count_flops(c, 1, -1), std::invalid_argument);
}

TEST(FlopConvention, RoundTripsAndRejectsUnknown) {
  for (auto convention : {FlopConvention::matmul, FlopConvention::causal, FlopConvention::palm})
    EXPECT_EQ(flop_convention_from_string(to_string(convention)), convention);
  EXPECT_THROW(flop_convention_from_string("6N"), std::invalid_argument);
}

TEST(TrainPrecision, ParsesNamesAndAliases) {
  for (TrainPrecision precision : kTrainPrecisions)
    EXPECT_EQ(train_precision_from_string(to_string(precision)), precision);
  EXPECT_EQ(train_precision_from_string("fp32"), TrainPrecision::fp32);
  EXPECT_EQ(train_precision_from_string("32-true"), TrainPrecision::fp32);
  EXPECT_EQ(train_precision_from_string("bf16-true"), TrainPrecision::bf16_true);
  EXPECT_EQ(train_precision_from_string("bf16"), TrainPrecision::bf16_true);
  EXPECT_EQ(train_precision_from_string("BF16-Mixed"), TrainPrecision::bf16_mixed);
  EXPECT_EQ(to_string(TrainPrecision::bf16_mixed), "bf16-mixed");
  try {
    train_precision_from_string("fp8");
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("precision"), std::string::npos) << message;
    EXPECT_NE(message.find("'fp8'"), std::string::npos) << message;
    EXPECT_NE(message.find("fp32, bf16-true, bf16-mixed"), std::string::npos) << message;
  }
}

TEST(MemoryEstimate, BytesPerParameterByPrecision) {
  const Config c = config_by_name("Llama-2-7b-hf");
  const int64_t n = 6'738'415'616;
  const MemoryEstimate fp32 = estimate_training_memory(c, 1, 4096, TrainPrecision::fp32);
  EXPECT_EQ(fp32.weights_bytes, 4 * n);
  EXPECT_EQ(fp32.gradients_bytes, 4 * n);
  EXPECT_EQ(fp32.optimizer_bytes, 8 * n);
  const MemoryEstimate bf16 = estimate_training_memory(c, 1, 4096, TrainPrecision::bf16_true);
  EXPECT_EQ(bf16.weights_bytes + bf16.gradients_bytes + bf16.optimizer_bytes, 8 * n);
  EXPECT_EQ(bf16.activations_bytes * 2, fp32.activations_bytes);
  const MemoryEstimate mixed = estimate_training_memory(c, 1, 4096, TrainPrecision::bf16_mixed);
  EXPECT_EQ(mixed.weights_bytes, fp32.weights_bytes);
  // bf16 activations, but the loss's log-softmax stays fp32: 2 more bytes per token × V.
  EXPECT_EQ(mixed.activations_bytes, bf16.activations_bytes + 4096LL * 32000 * 2);
}

TEST(MemoryEstimate, ActivationsPerTokenFollowTheDocumentedFormula) {
  // pythia-14m: C=128, H=G=4, Q=32, I=512, LayerNorm, parallel residual, separate norm_2.
  EXPECT_EQ(block_activation_elements_per_token(config_by_name("pythia-14m")),
            2 * 128 + 2 * 128 + (5 * 4 * 32 + 4) + 2 * 512);
  // phi-2 shares the attention norm: no norm_2 tensors.
  const Config phi = config_by_name("phi-2");
  EXPECT_EQ(block_activation_elements_per_token(phi), 2 * 2560 + (5 * 32 * 80 + 32) + 2 * 10240);
  const Config c = config_by_name("pythia-14m");
  const int64_t per_token = 6 * block_activation_elements_per_token(c) + 2 * 128 + 2 * 50304;
  EXPECT_EQ(estimate_training_memory(c, 3, 512, TrainPrecision::fp32).activations_bytes, 3 * 512 * per_token * 4);
}

TEST(MemoryEstimate, RejectsBadInputAndUnknownPrecision) {
  const Config c = config_by_name("pythia-14m");
  EXPECT_THROW(estimate_training_memory(c, 0, 8, TrainPrecision::fp32), std::invalid_argument);
  EXPECT_THROW(train_precision_from_string("fp16"), std::invalid_argument);
  EXPECT_EQ(train_precision_from_string("bf16-mixed"), TrainPrecision::bf16_mixed);
}

}  // namespace
}  // namespace tokbench::model
