// config::check_fields, from the rows' choices and bounds: the defaults pass, a word outside a
// row's choices and a number outside its bounds are refused naming the option and the value,
// the edges of a range are where the row says, every choice is named in its option's help, and
// each section's check of its options together refuses with its one line.
#include <gtest/gtest.h>

#include <limits>
#include <stdexcept>
#include <string>

#include "config/checks.hpp"

namespace tokbench::config {
namespace {

std::string refusal(const RunOptions& options) {
  try {
    check_fields(options);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(ConfigChecks, DefaultsPass) { EXPECT_EQ(refusal(RunOptions{}), ""); }

// A row's refuse_with sees the other options: --grad-clip-norm runs on one device and DDP, and a
// sharded mode is refused naming the value, the mode and what is valid.
TEST(ConfigChecks, GradClipNormIsRefusedWhereGradientsAreSharded) {
  RunOptions o;
  o.grad_clip_norm = 1.0;
  EXPECT_EQ(refusal(o), "");
  o.distributed_mode = "ddp";
  EXPECT_EQ(refusal(o), "");
  for (const std::string mode : {"fsdp", "fsdp2"}) {
    o.distributed_mode = mode;
    EXPECT_EQ(refusal(o), "--grad-clip-norm 1 cannot run with --distributed-mode " + mode +
                              " (its gradients are sharded); valid: --distributed-mode none or ddp");
  }
  o.grad_clip_norm.reset();
  EXPECT_EQ(refusal(o), "");
  o.distributed_mode = "none";
  o.grad_clip_norm = 0;
  EXPECT_EQ(refusal(o), "--grad-clip-norm 0 must be a positive number");
}

TEST(ConfigChecks, AWordOutsideItsChoicesIsRefusedWithThem) {
  RunOptions o;
  o.shard_mode = "zero9";
  EXPECT_EQ(refusal(o), "--shard-mode 'zero9' is not valid; valid: zero2, zero3, hybrid_zero2, hybrid_zero3");
  o = RunOptions{};
  o.distributed_mode = "zero";  // parallel's words
  EXPECT_EQ(refusal(o), "--distributed-mode 'zero' is not valid; valid: none, ddp, fsdp, fsdp2");
}

TEST(ConfigChecks, AnEmptyDefaultWordPassesOnlyWhereTheRowSaysSo) {
  RunOptions o;
  o.cpu_allocator = "";  // the executor's own
  EXPECT_EQ(refusal(o), "");
  o.zero_grad = "";
  EXPECT_EQ(refusal(o), "--zero-grad '' is not valid; valid: none, inplace");
}

TEST(ConfigChecks, NumbersAreRefusedAtTheirRowsEdges) {
  RunOptions o;
  o.micro_batch_size = 0;
  EXPECT_EQ(refusal(o), "--micro-batch-size 0 must be a positive integer");
  o = RunOptions{};
  o.n_layers = 100001;
  EXPECT_EQ(refusal(o), "--n-layers 100001 is not valid; valid: 1..100000 (the deepest litgpt model has 126)");
  o.n_layers = 100000;
  EXPECT_EQ(refusal(o), "");
  o.beta1 = 1;  // [0, 1): the open end
  EXPECT_EQ(refusal(o), "--beta1 1 must be in [0, 1)");
  o.beta1 = 0;
  EXPECT_EQ(refusal(o), "");
  o.lr = 0;  // (0, ...)
  EXPECT_EQ(refusal(o), "--lr 0 must be a positive number");
  o = RunOptions{};
  o.fsdp_bucket_params = 1.5;  // a whole number
  EXPECT_EQ(refusal(o), "--fsdp-bucket-params 1.5 is not valid; valid: a positive whole number of parameters (e.g. 1e8)");
  o.fsdp_bucket_params.reset();  // unset: not checked
  o.weight_decay = std::numeric_limits<double>::infinity();  // no max, but not finite
  EXPECT_EQ(refusal(o), "--weight-decay inf must be a finite number >= 0");
  o.weight_decay = 0;
  o.master_port = 65535;
  EXPECT_EQ(refusal(o), "");
  o.master_port = 65536;
  EXPECT_EQ(refusal(o), "--master-port 65536 is not valid; valid: 0 (a free port) or 1..65535");
}

// The checks of two options of one section sit beside that section and run in check_fields,
// before anything resolves: each is refused there with its one line, and the other value of the
// pair lets it through.
TEST(ConfigChecks, EachSectionChecksItsOptionsTogether) {
  RunOptions o;
  o.warmup_iters = o.max_iters;  // batch
  EXPECT_EQ(refusal(o), "--warmup-iters 45 must be fewer than --max-iters 45; valid: 0..44");
  o.max_iters = 46;
  EXPECT_EQ(refusal(o), "");

  o = RunOptions{};
  o.use_torchao_fp8_allgather = true;  // device
  EXPECT_EQ(refusal(o), "--use-torchao-fp8-allgather and --use-torchao-fp8-precompute-scale-for-fsdp refine "
                        "torchao's float8 linears; valid: with --use-torchao-fp8-linear");
  o.use_torchao_fp8_linear = true;
  EXPECT_EQ(refusal(o), "");
  o.low_precision_mode = "fp8-default-te";
  EXPECT_EQ(refusal(o), "--low-precision-mode fp8-default-te and --use-torchao-fp8-linear are two fp8 recipes; "
                        "valid: one of them");

  o = RunOptions{};
  o.shard_mode = "hybrid_zero2";  // parallelism
  EXPECT_EQ(refusal(o), "--shard-mode 'hybrid_zero2' needs --sharding-size (ranks per shard group)");
  o.sharding_size = 2;
  EXPECT_EQ(refusal(o), "--sharding-size 2 applies to --distributed-mode fsdp or fsdp2 only (mode is none)");
  o.distributed_mode = "fsdp2";
  EXPECT_EQ(refusal(o), "");

  o = RunOptions{};
  o.use_hf = true;  // compatibility
  EXPECT_EQ(refusal(o), "--use-hf: tokbench trains litgpt's models (the reference's experimental Hugging Face "
                        "transformers path is not supported); valid: --use-hf False");
  o = RunOptions{};
  o.nsys_enabled = true;
  EXPECT_EQ(refusal(o), "--nsys-enabled True is not supported: run `nsys profile tokbench run ...` instead; valid: "
                        "False");

  o = RunOptions{};
  o.profile_iters = 0;  // diagnostics
  EXPECT_EQ(refusal(o), "--profile-iters 0 needs --profile PATH; valid: --profile PATH --profile-iters 1..100");
  o.profile_path = "trace.json";
  EXPECT_EQ(refusal(o), "--profile-iters 0 is not valid; valid: 1..100");
  o.profile_iters = 101;
  EXPECT_EQ(refusal(o), "--profile-iters 101 is not valid; valid: 1..100");
  o.profile_iters = 100;
  EXPECT_EQ(refusal(o), "");
  o.time_account_iters = 101;
  EXPECT_EQ(refusal(o), "--time-account-iters 101 is not valid; valid: 0..100 (0: no time account)");
  o.time_account_iters = 0;
  EXPECT_EQ(refusal(o), "");
}

// --help lists the words where they are written in the help text; a word added to a row's
// choices (or to parallel's modes) without its help line fails here.
TEST(ConfigChecks, EveryChoiceIsNamedInItsHelp) {
  int words = 0;
  for (const Field* field : all_fields()) {
    if (field->choices == nullptr) continue;
    for (const std::string& word : field->choices()) {
      EXPECT_NE(std::string(field->help).find(word), std::string::npos) << field->names << ": " << word;
      ++words;
    }
  }
  EXPECT_GE(words, 20);
}

}  // namespace
}  // namespace tokbench::config
