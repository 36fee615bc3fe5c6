// Token batches for training: x (B, T) inputs and y (B, T) targets shifted by one, from
// either synthetic random tokens drawn as the reference benchmark draws them (ids 0..99, T+1
// per sequence, x = first T, y = last T) or little-endian uint16/uint32 tokens in a file read
// through mmap. Batches are built on the host into preallocated buffers (pinned when the
// device is CUDA) and copied to the device without blocking; nothing is allocated per batch.
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <vector>

namespace tokbench::train {

struct TokenBatchOptions {
  int64_t micro_batch = 1;  // B
  int64_t seq_len = 0;      // T
  uint64_t seed = 1337;
  // Empty: synthetic tokens. Otherwise a file of token_bytes-wide little-endian tokens.
  std::filesystem::path token_file;
  int token_bytes = 2;
  bool sequential = false;  // file windows in order (wrapping) instead of at random offsets
  // --dynamic (sequence_lengths.hpp): each sequence's tail past its drawn length becomes padding
  // (input 0, target -1). The lengths depend on the run's seed, this rank and the world size.
  bool dynamic_lengths = false;
  uint64_t run_seed = 1337;
  int64_t rank = 0;
  int64_t world_size = 1;
  // When > 0, file tokens must be < vocab_size (checked as they are copied).
  int64_t vocab_size = 0;
  // Host buffers in the rotation. A buffer may be refilled only once the device has finished
  // copying it; the training loop synchronises every iteration, so GA buffers suffice.
  int64_t host_buffers = 1;
};

struct TokenBatch {
  at::Tensor x;  // (B, T) int64 on the device
  at::Tensor y;  // (B, T) int64 on the device, x shifted left by one
  int64_t real_tokens = 0;  // targets that are not padding: B·T, or fewer with dynamic lengths
};

// A file of tokens, memory-mapped read-only. Validates on open; throws std::invalid_argument
// naming `token_file`, the value and what is valid.
class TokenFile {
 public:
  TokenFile(const std::filesystem::path& path, int token_bytes, int64_t min_tokens);
  ~TokenFile();
  TokenFile(const TokenFile&) = delete;
  TokenFile& operator=(const TokenFile&) = delete;

  int64_t size() const { return tokens_; }
  int token_bytes() const { return token_bytes_; }
  // Copies tokens [start, start + count) into out as int64; returns the largest one.
  int64_t read(int64_t start, int64_t count, int64_t* out) const;
  // Tells the kernel how windows will be read, so read-ahead helps rather than wastes I/O.
  void advise_sequential(bool sequential) const;

 private:
  const unsigned char* data_ = nullptr;
  std::size_t bytes_ = 0;
  int64_t tokens_ = 0;
  int token_bytes_ = 2;
};

class TokenBatcher {
 public:
  TokenBatcher(const TokenBatchOptions& options, const c10::Device& device);
  ~TokenBatcher();

  // The next micro-batch. The tensors are views of reused buffers: valid until the same
  // buffer comes round again (host_buffers batches later on the CPU; on CUDA the device
  // buffer is reused in stream order, which is safe).
  TokenBatch next();

 private:
  void fill_synthetic(int64_t* x, int64_t* y);
  void fill_from_file(int64_t* x, int64_t* y);
  int64_t pad_to_dynamic_lengths(int64_t* x, int64_t* y);  // returns the real tokens

  TokenBatchOptions options_;
  int64_t micro_batches_drawn_ = 0;
  c10::Device device_;
  std::unique_ptr<TokenFile> file_;
  std::vector<at::Tensor> host_;        // each (2, B, T): [0] = x, [1] = y
  std::vector<TokenBatch> host_views_;  // x/y views of each host buffer, made once
  at::Tensor device_buffer_;            // (2, B, T) on the device; undefined on the CPU
  TokenBatch device_views_;
  std::vector<int64_t> window_;   // T+1 tokens of one sequence (file source)
  int64_t next_buffer_ = 0;
  uint64_t rng_state_[4];         // xoshiro256**
  int64_t file_position_ = 0;
};

}  // namespace tokbench::train
