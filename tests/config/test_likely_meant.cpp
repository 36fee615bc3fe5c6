// usage::likely_meant and the refusals that name the word meant: a typo a few characters off one
// valid word is named; a word far from all, or as near two, is not.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "usage/likely_meant.hpp"
#include "usage/usage_error.hpp"

namespace tokbench::usage {
namespace {

TEST(LikelyMeant, EditDistanceIsLevenshteins) {
  EXPECT_EQ(edit_distance("kitten", "sitting"), 3u);
  EXPECT_EQ(edit_distance("", "abc"), 3u);
  EXPECT_EQ(edit_distance("abc", ""), 3u);
  EXPECT_EQ(edit_distance("seq-len", "seq-len"), 0u);
  EXPECT_EQ(edit_distance("ddq", "ddp"), 1u);
}

TEST(LikelyMeant, NamesTheOneNearWord) {
  const std::vector<std::string> dtypes{"bf16-mixed", "bf16-true", "32-true"};
  EXPECT_EQ(likely_meant("bf16-mix", dtypes), "bf16-mixed");
  EXPECT_EQ(likely_meant("bf16-tru", dtypes), "bf16-true");
  EXPECT_EQ(likely_meant("32-true", dtypes), "32-true");
  EXPECT_EQ(likely_meant("ddq", {"none", "ddp", "fsdp", "fsdp2"}), "ddp");
  // Past ten characters a third edit is still a typo.
  EXPECT_EQ(likely_meant("micro-bch-sze", {"micro-batch-size", "global-batch-size"}), "micro-batch-size");
}

TEST(LikelyMeant, NamesNoneWhenFarOrTied) {
  EXPECT_EQ(likely_meant("zero9", {"zero2", "zero3", "hybrid_zero2"}), std::nullopt);  // as near two
  EXPECT_EQ(likely_meant("fp16", {"bf16-mixed", "bf16-true", "32-true"}), std::nullopt);
  EXPECT_EQ(likely_meant("xy", {"on", "off"}), std::nullopt);  // both characters changed
  EXPECT_EQ(likely_meant("", {"on", "off"}), std::nullopt);
  EXPECT_EQ(likely_meant("anything", {}), std::nullopt);
  EXPECT_EQ(likely_meant("seq-le", {"seq-len", "seq-len"}), "seq-len");  // one word listed twice is no tie
}

std::string refusal(const std::string& value, const std::vector<std::string>& valid) {
  try {
    require_choice("--dtype", value, valid);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "(accepted)";
}

TEST(LikelyMeant, RequireChoiceSaysWhichWasMeant) {
  const std::vector<std::string> dtypes{"bf16-mixed", "bf16-true", "32-true"};
  EXPECT_EQ(refusal("bf16-mix", dtypes),
            "--dtype 'bf16-mix' is not valid (did you mean 'bf16-mixed'?); valid: bf16-mixed, bf16-true, 32-true");
  EXPECT_EQ(refusal("fp16", dtypes), "--dtype 'fp16' is not valid; valid: bf16-mixed, bf16-true, 32-true");
  EXPECT_EQ(refusal("32-true", dtypes), "(accepted)");
}

}  // namespace
}  // namespace tokbench::usage
