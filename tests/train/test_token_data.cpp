// Token data: the synthetic stream (range, shift, determinism per seed) and the mmap file
// source (uint16/uint32 little-endian, random and sequential windows, validation messages).
#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <unistd.h>
#include <vector>

#include "train/sequence_lengths.hpp"
#include "train/token_data.hpp"

namespace tokbench::train {
namespace {

namespace fs = std::filesystem;

fs::path temp_path(const std::string& name) {
  return fs::temp_directory_path() / ("tokbench_train_" + std::to_string(::getpid()) + "_" + name);
}

// Writes ids as little-endian integers of `width` bytes.
fs::path write_tokens(const std::string& name, const std::vector<int64_t>& ids, int width) {
  const fs::path path = temp_path(name);
  std::ofstream out(path, std::ios::binary);
  for (int64_t id : ids) {
    for (int byte = 0; byte < width; ++byte) out.put(static_cast<char>((id >> (8 * byte)) & 0xff));
  }
  return path;
}

std::string error_of(const TokenBatchOptions& options) {
  try {
    TokenBatcher batcher(options, c10::Device(c10::kCPU));
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(SyntheticTokens, IdsAreBelowOneHundredAndTargetsAreShiftedInputs) {
  TokenBatchOptions options;
  options.micro_batch = 3;
  options.seq_len = 64;
  TokenBatcher batcher(options, c10::Device(c10::kCPU));
  const TokenBatch batch = batcher.next();
  ASSERT_EQ(batch.x.sizes(), (at::IntArrayRef{3, 64}));
  ASSERT_EQ(batch.y.sizes(), (at::IntArrayRef{3, 64}));
  EXPECT_EQ(batch.x.scalar_type(), at::kLong);
  EXPECT_GE(batch.x.min().item<int64_t>(), 0);
  EXPECT_LE(batch.x.max().item<int64_t>(), 99);
  EXPECT_LE(batch.y.max().item<int64_t>(), 99);
  // y[:, :-1] == x[:, 1:]: one sequence of T+1 tokens split as the reference does.
  EXPECT_TRUE(at::equal(batch.y.narrow(1, 0, 63), batch.x.narrow(1, 1, 63)));
  // Uses most of the range (192 draws from 100 values).
  EXPECT_GT(std::get<0>(at::_unique(batch.x)).numel(), 50);
}

TEST(SyntheticTokens, SameSeedSameStreamDifferentSeedDifferentStream) {
  TokenBatchOptions options;
  options.micro_batch = 2;
  options.seq_len = 16;
  TokenBatcher a(options, c10::Device(c10::kCPU));
  TokenBatcher b(options, c10::Device(c10::kCPU));
  options.seed = 7;
  TokenBatcher c(options, c10::Device(c10::kCPU));
  for (int i = 0; i < 3; ++i) {
    const at::Tensor xa = a.next().x.clone();
    const at::Tensor xb = b.next().x.clone();
    const at::Tensor xc = c.next().x.clone();
    EXPECT_TRUE(at::equal(xa, xb)) << "batch " << i;
    EXPECT_FALSE(at::equal(xa, xc)) << "batch " << i;
  }
  // Consecutive batches differ.
  EXPECT_FALSE(at::equal(a.next().x.clone(), a.next().x.clone()));
}

TEST(FileTokens, ReadsUint16SequentialWindows) {
  std::vector<int64_t> ids;
  for (int64_t i = 0; i < 40; ++i) ids.push_back(60000 + i);  // > 255: both bytes matter
  const fs::path path = write_tokens("u16.bin", ids, 2);
  TokenBatchOptions options;
  options.micro_batch = 2;
  options.seq_len = 8;
  options.token_file = path;
  options.token_bytes = 2;
  options.sequential = true;
  TokenBatcher batcher(options, c10::Device(c10::kCPU));
  const TokenBatch batch = batcher.next();
  for (int64_t j = 0; j < 8; ++j) {
    EXPECT_EQ(batch.x[0][j].item<int64_t>(), 60000 + j);
    EXPECT_EQ(batch.y[0][j].item<int64_t>(), 60001 + j);
    EXPECT_EQ(batch.x[1][j].item<int64_t>(), 60008 + j);  // the next window starts T later
  }
  fs::remove(path);
}

TEST(FileTokens, ReadsUint32RandomWindowsDeterministically) {
  std::vector<int64_t> ids;
  for (int64_t i = 0; i < 1000; ++i) ids.push_back(100000 + i * 1000);  // needs 4 bytes
  const fs::path path = write_tokens("u32.bin", ids, 4);
  TokenBatchOptions options;
  options.micro_batch = 4;
  options.seq_len = 16;
  options.token_file = path;
  options.token_bytes = 4;
  TokenBatcher a(options, c10::Device(c10::kCPU));
  TokenBatcher b(options, c10::Device(c10::kCPU));
  const TokenBatch batch = a.next();
  EXPECT_TRUE(at::equal(batch.x, b.next().x));
  for (int64_t row = 0; row < 4; ++row) {
    const int64_t first = batch.x[row][0].item<int64_t>();
    ASSERT_EQ((first - 100000) % 1000, 0);
    const int64_t start = (first - 100000) / 1000;
    ASSERT_LE(start, 1000 - 17);
    for (int64_t j = 0; j < 16; ++j) {
      EXPECT_EQ(batch.x[row][j].item<int64_t>(), ids[start + j]);
      EXPECT_EQ(batch.y[row][j].item<int64_t>(), ids[start + j + 1]);
    }
  }
  fs::remove(path);
}

TEST(FileTokens, RejectsMissingOddSizedAndShortFilesNamingTheOption) {
  TokenBatchOptions options;
  options.seq_len = 8;
  options.token_file = temp_path("missing.bin");
  std::string message = error_of(options);
  EXPECT_NE(message.find("token_file"), std::string::npos) << message;
  EXPECT_NE(message.find("does not exist"), std::string::npos) << message;
  EXPECT_NE(message.find("missing.bin"), std::string::npos) << message;

  const fs::path odd = write_tokens("odd.bin", {1, 2, 3}, 1);  // 3 bytes for uint16
  options.token_file = odd;
  message = error_of(options);
  EXPECT_NE(message.find("token_file"), std::string::npos) << message;
  EXPECT_NE(message.find("not a multiple of the 2-byte"), std::string::npos) << message;

  const fs::path shorter = write_tokens("short.bin", {1, 2, 3, 4, 5, 6, 7, 8}, 4);  // 8 < T+1
  options.token_file = shorter;
  options.token_bytes = 4;
  message = error_of(options);
  EXPECT_NE(message.find("holds 8 uint32 tokens"), std::string::npos) << message;
  EXPECT_NE(message.find("at least 9"), std::string::npos) << message;

  options.token_bytes = 3;
  message = error_of(options);
  EXPECT_NE(message.find("valid token widths: 2 (uint16) or 4 (uint32)"), std::string::npos) << message;
  fs::remove(odd);
  fs::remove(shorter);
}

TEST(FileTokens, RejectsIdsOutsideTheVocabulary) {
  const fs::path path = write_tokens("big_ids.bin", std::vector<int64_t>(20, 500), 2);
  TokenBatchOptions options;
  options.seq_len = 8;
  options.token_file = path;
  options.vocab_size = 128;
  TokenBatcher batcher(options, c10::Device(c10::kCPU));
  try {
    batcher.next();
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("token id 500"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("0..127"), std::string::npos) << e.what();
  }
  fs::remove(path);
}

// --dynamic: every length in [10, T], all of them drawn, the same for the same seed and place;
// the batcher pads each sequence past its length (input 0, target -1), counts the real tokens,
// and a rank draws the lengths of its own places, so two ranks' sequences differ.
TEST(TokenData, DynamicLengthsAreDrawnPerSequenceAndPadded) {
  constexpr int64_t T = 40;
  std::vector<int> seen(T + 1, 0);
  for (int64_t index = 0; index < 20000; ++index) {
    const int64_t t = dynamic_length(1337, index, T);
    ASSERT_GE(t, kMinDynamicLength);
    ASSERT_LE(t, T);
    ++seen[t];
    ASSERT_EQ(t, dynamic_length(1337, index, T));
  }
  for (int64_t t = kMinDynamicLength; t <= T; ++t) EXPECT_GT(seen[t], 400) << t;  // about 645 each
  int same = 0;
  for (int64_t index = 0; index < 1000; ++index) same += dynamic_length(1, index, T) == dynamic_length(2, index, T);
  EXPECT_LT(same, 100);  // another seed, other lengths (1 in 31 agree by chance)

  TokenBatchOptions options;
  options.micro_batch = 3;
  options.seq_len = T;
  options.dynamic_lengths = true;
  options.world_size = 2;
  for (int64_t rank : {0, 1}) {
    options.rank = rank;
    TokenBatcher batcher(options, c10::Device(c10::kCPU));
    for (int64_t count = 0; count < 4; ++count) {
      const TokenBatch batch = batcher.next();
      int64_t real = 0;
      for (int64_t b = 0; b < 3; ++b) {
        const int64_t t = dynamic_length(options.run_seed, sequence_index(count, rank, 2, 3, b), T);
        real += t;
        EXPECT_TRUE(batch.y[b].slice(0, 0, t).ge(0).all().item<bool>());
        EXPECT_TRUE(batch.y[b].slice(0, t).eq(-1).all().item<bool>());
        EXPECT_TRUE(batch.x[b].slice(0, t).eq(0).all().item<bool>());
      }
      EXPECT_EQ(batch.real_tokens, real);
    }
  }
  EXPECT_NE(sequence_index(0, 0, 2, 3, 0), sequence_index(0, 1, 2, 3, 0));
}

}  // namespace
}  // namespace tokbench::train
