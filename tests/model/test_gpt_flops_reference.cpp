// count_flops (matmul convention) equals what PyTorch's FlopCounterMode measured over litgpt's
// own GPT (tests/fixtures/model/flops_reference.json, from scripts/reference/litgpt_reference.py
// --flops): forward and forward+backward, exactly, for every committed config and shape; and
// with every block under torch.utils.checkpoint, the hardware FLOPs (count_flops's total plus
// count_recompute_flops) equal what FlopCounterMode counted, the recomputed forward included.
#include <gtest/gtest.h>

#include "model/catalog.hpp"
#include "model/counting.hpp"
#include "test_gpt_support.hpp"

namespace tokbench::model {
namespace {

TEST(GptFlopsReference, CountFlopsEqualsFlopCounterModeOverLitgpt) {
  const auto doc = testing::read_json(testing::fixtures_dir() / "model" / "flops_reference.json");
  const auto& rows = doc.at("rows");
  ASSERT_GE(rows.size(), 30u);
  for (const auto& row : rows) {
    const auto name = row.at("name").get<std::string>();
    const int64_t n_layer = row.at("n_layer"), seq_len = row.at("seq_len"), micro_batch = row.at("micro_batch");
    const Config config = with_overrides(config_by_name(name), {.n_layer = n_layer, .seq_len = seq_len});
    const FlopCounts counted = count_flops(config, micro_batch, seq_len, FlopConvention::matmul);
    SCOPED_TRACE(name + " L=" + std::to_string(n_layer) + " T=" + std::to_string(seq_len) +
                 " B=" + std::to_string(micro_batch));
    EXPECT_EQ(counted.forward, row.at("flops_forward").get<int64_t>());
    EXPECT_EQ(counted.total(), row.at("flops_total").get<int64_t>());
    EXPECT_EQ(counted.total() + count_recompute_flops(config, micro_batch, seq_len, FlopConvention::matmul),
              row.at("flops_total_checkpointed").get<int64_t>());
  }
}

}  // namespace
}  // namespace tokbench::model
