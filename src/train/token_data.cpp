// Synthetic and file-backed token batches (token_data.hpp). The synthetic stream uses
// xoshiro256** seeded through splitmix64 and Lemire's unbiased bounded draw, so the ids are
// uniform on 0..99 like torch.randint(0, 100) and the stream depends only on (seed, B, T).
#include "train/token_data.hpp"

#include "train/sequence_lengths.hpp"

#include <ATen/ops/empty.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <stdexcept>
#include <string>

namespace tokbench::train {
namespace {

// The reference benchmark's DummyDataset: torch.randint(0, 100, (T+1,)).
constexpr uint32_t kSyntheticVocab = 100;

uint64_t splitmix64(uint64_t& state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

uint64_t xoshiro_next(uint64_t (&s)[4]) {
  const uint64_t result = std::rotl(s[1] * 5, 7) * 9;
  const uint64_t t = s[1] << 17;
  s[2] ^= s[0];
  s[3] ^= s[1];
  s[1] ^= s[2];
  s[0] ^= s[3];
  s[2] ^= t;
  s[3] = std::rotl(s[3], 45);
  return result;
}

// Uniform on [0, bound) without modulo bias (Lemire 2019), from 32-bit draws.
uint32_t bounded32(uint64_t (&s)[4], uint32_t bound) {
  uint64_t m = (xoshiro_next(s) >> 32) * bound;
  auto low = static_cast<uint32_t>(m);
  if (low < bound) {
    const uint32_t threshold = (0u - bound) % bound;
    while (low < threshold) {
      m = (xoshiro_next(s) >> 32) * bound;
      low = static_cast<uint32_t>(m);
    }
  }
  return static_cast<uint32_t>(m >> 32);
}

// Uniform on [0, bound) for 64-bit bounds (file offsets).
uint64_t bounded64(uint64_t (&s)[4], uint64_t bound) {
  unsigned __int128 m = static_cast<unsigned __int128>(xoshiro_next(s)) * bound;
  auto low = static_cast<uint64_t>(m);
  if (low < bound) {
    const uint64_t threshold = (0ull - bound) % bound;
    while (low < threshold) {
      m = static_cast<unsigned __int128>(xoshiro_next(s)) * bound;
      low = static_cast<uint64_t>(m);
    }
  }
  return static_cast<uint64_t>(m >> 64);
}

[[noreturn]] void bad_data(const std::filesystem::path& path, const std::string& why) {
  throw std::invalid_argument("token_file: '" + path.string() + "' " + why);
}

const char* token_type_name(int token_bytes) { return token_bytes == 2 ? "uint16" : "uint32"; }

}  // namespace

TokenFile::TokenFile(const std::filesystem::path& path, int token_bytes, int64_t min_tokens)
    : token_bytes_(token_bytes) {
  if (token_bytes != 2 && token_bytes != 4) {
    bad_data(path, "cannot be read with " + std::to_string(token_bytes) +
                       "-byte tokens; valid token widths: 2 (uint16) or 4 (uint32)");
  }
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) {
    bad_data(path, "does not exist; expected a file of little-endian uint16 or uint32 tokens");
  }
  if (!std::filesystem::is_regular_file(path, ec)) {
    bad_data(path, "is not a regular file; expected a file of little-endian uint16 or uint32 tokens");
  }
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) bad_data(path, std::string("cannot be opened: ") + std::strerror(errno));
  struct stat info {};
  if (::fstat(fd, &info) != 0) {
    ::close(fd);
    bad_data(path, std::string("cannot be read: ") + std::strerror(errno));
  }
  bytes_ = static_cast<std::size_t>(info.st_size);
  if (bytes_ % static_cast<std::size_t>(token_bytes) != 0) {
    ::close(fd);
    bad_data(path, "has " + std::to_string(bytes_) + " bytes, not a multiple of the " +
                       std::to_string(token_bytes) + "-byte token size (" + token_type_name(token_bytes) + ")");
  }
  tokens_ = static_cast<int64_t>(bytes_ / static_cast<std::size_t>(token_bytes));
  if (tokens_ < min_tokens) {
    ::close(fd);
    bad_data(path, "holds " + std::to_string(tokens_) + " " + token_type_name(token_bytes) +
                       " tokens; the sequence length needs at least " + std::to_string(min_tokens) +
                       " (T+1)");
  }
  void* mapped = ::mmap(nullptr, bytes_, PROT_READ, MAP_PRIVATE, fd, 0);
  ::close(fd);  // the mapping keeps the file referenced
  if (mapped == MAP_FAILED) bad_data(path, std::string("cannot be memory-mapped: ") + std::strerror(errno));
  data_ = static_cast<const unsigned char*>(mapped);
}

TokenFile::~TokenFile() {
  if (data_ != nullptr) ::munmap(const_cast<unsigned char*>(data_), bytes_);
}

void TokenFile::advise_sequential(bool sequential) const {
  ::madvise(const_cast<unsigned char*>(data_), bytes_, sequential ? MADV_SEQUENTIAL : MADV_RANDOM);
}

int64_t TokenFile::read(int64_t start, int64_t count, int64_t* out) const {
  // Little-endian on disk: assemble bytes explicitly so a big-endian host reads the same ids
  // (compilers turn this into plain loads on little-endian machines).
  int64_t largest = 0;
  const unsigned char* p = data_ + static_cast<std::size_t>(start) * token_bytes_;
  if (token_bytes_ == 2) {
    for (int64_t i = 0; i < count; ++i, p += 2) {
      const int64_t id = static_cast<int64_t>(p[0]) | (static_cast<int64_t>(p[1]) << 8);
      out[i] = id;
      largest = std::max(largest, id);
    }
  } else {
    for (int64_t i = 0; i < count; ++i, p += 4) {
      const int64_t id = static_cast<int64_t>(p[0]) | (static_cast<int64_t>(p[1]) << 8) |
                         (static_cast<int64_t>(p[2]) << 16) | (static_cast<int64_t>(p[3]) << 24);
      out[i] = id;
      largest = std::max(largest, id);
    }
  }
  return largest;
}

TokenBatcher::TokenBatcher(const TokenBatchOptions& options, const c10::Device& device)
    : options_(options), device_(device) {
  if (options.micro_batch < 1 || options.seq_len < 1) {
    throw std::invalid_argument("TokenBatcher: micro_batch and seq_len must be positive (got " +
                                std::to_string(options.micro_batch) + ", " + std::to_string(options.seq_len) + ")");
  }
  if (!options.token_file.empty()) {
    file_ = std::make_unique<TokenFile>(options.token_file, options.token_bytes, options.seq_len + 1);
    file_->advise_sequential(options.sequential);
    window_.resize(static_cast<std::size_t>(options.seq_len + 1));
  }
  uint64_t seed_state = options.seed;
  for (auto& word : rng_state_) word = splitmix64(seed_state);

  // Pinned host memory lets the copy to a CUDA device run asynchronously.
  const auto host_options = at::TensorOptions().dtype(at::kLong).pinned_memory(device.is_cuda());
  const int64_t buffers = device.is_cpu() ? 1 : std::max<int64_t>(1, options.host_buffers);
  for (int64_t i = 0; i < buffers; ++i) {
    host_.push_back(at::empty({2, options.micro_batch, options.seq_len}, host_options));
    host_views_.push_back({host_.back()[0], host_.back()[1]});
  }
  if (!device.is_cpu()) {
    device_buffer_ = at::empty({2, options.micro_batch, options.seq_len}, at::TensorOptions().dtype(at::kLong).device(device));
    device_views_ = {device_buffer_[0], device_buffer_[1]};
  }
}

TokenBatcher::~TokenBatcher() = default;

void TokenBatcher::fill_synthetic(int64_t* x, int64_t* y) {
  const int64_t T = options_.seq_len;
  for (int64_t b = 0; b < options_.micro_batch; ++b, x += T, y += T) {
    // One sequence of T+1 tokens: x takes tokens 0..T-1 and y tokens 1..T.
    x[0] = bounded32(rng_state_, kSyntheticVocab);
    for (int64_t j = 1; j < T; ++j) {
      const int64_t token = bounded32(rng_state_, kSyntheticVocab);
      x[j] = token;
      y[j - 1] = token;
    }
    y[T - 1] = bounded32(rng_state_, kSyntheticVocab);
  }
}

void TokenBatcher::fill_from_file(int64_t* x, int64_t* y) {
  const int64_t T = options_.seq_len;
  const int64_t last_start = file_->size() - (T + 1);  // >= 0, checked by TokenFile
  for (int64_t b = 0; b < options_.micro_batch; ++b, x += T, y += T) {
    int64_t start = 0;
    if (options_.sequential) {
      if (file_position_ > last_start) file_position_ = 0;
      start = file_position_;
      file_position_ += T;  // the next window's first input is this window's last target
    } else {
      start = static_cast<int64_t>(bounded64(rng_state_, static_cast<uint64_t>(last_start) + 1));
    }
    const int64_t largest = file_->read(start, T + 1, window_.data());
    if (options_.vocab_size > 0 && largest >= options_.vocab_size) {
      bad_data(options_.token_file, "holds token id " + std::to_string(largest) + " near token offset " +
                                        std::to_string(start) + ", outside the model's vocabulary (valid ids: 0.." +
                                        std::to_string(options_.vocab_size - 1) + ")");
    }
    std::memcpy(x, window_.data(), static_cast<std::size_t>(T) * sizeof(int64_t));
    std::memcpy(y, window_.data() + 1, static_cast<std::size_t>(T) * sizeof(int64_t));
  }
}

TokenBatch TokenBatcher::next() {
  const auto index = static_cast<std::size_t>(next_buffer_);
  at::Tensor& host = host_[index];
  next_buffer_ = (next_buffer_ + 1) % static_cast<int64_t>(host_.size());
  int64_t* x = host.data_ptr<int64_t>();
  int64_t* y = x + options_.micro_batch * options_.seq_len;
  if (file_) {
    fill_from_file(x, y);
  } else {
    fill_synthetic(x, y);
  }
  const int64_t real_tokens = options_.dynamic_lengths ? pad_to_dynamic_lengths(x, y)
                                                       : options_.micro_batch * options_.seq_len;
  ++micro_batches_drawn_;
  TokenBatch batch = device_.is_cpu() ? host_views_[index] : device_views_;
  if (!device_.is_cpu()) device_buffer_.copy_(host, /*non_blocking=*/true);
  batch.real_tokens = real_tokens;
  return batch;
}

int64_t TokenBatcher::pad_to_dynamic_lengths(int64_t* x, int64_t* y) {
  const int64_t T = options_.seq_len;
  int64_t real = 0;
  for (int64_t b = 0; b < options_.micro_batch; ++b, x += T, y += T) {
    const int64_t index =
        sequence_index(micro_batches_drawn_, options_.rank, options_.world_size, options_.micro_batch, b);
    const int64_t length = dynamic_length(options_.run_seed, index, T);
    std::fill(x + length, x + T, int64_t{0});
    std::fill(y + length, y + T, int64_t{-1});  // ignored by every executor's loss
    real += length;
  }
  return real;
}

}  // namespace tokbench::train
