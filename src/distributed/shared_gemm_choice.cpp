// Rank 0's GEMM kernel choice on every rank (shared_gemm_choice.hpp). The choice travels as
// one int64 tensor, because c10d broadcasts tensors, not text:
//   [everywhere (-1: none, else the kernel), from_cache, number of classes,
//    then per class: kernel, length of the class key, the key's characters]
// Its length goes first, so the receiving ranks can size their buffer; a length of -1 says
// rank 0's measurement failed, so the other ranks fail at once with rank 0's reason instead
// of waiting in the second broadcast until the distributed timeout.
#include "distributed/shared_gemm_choice.hpp"

#include <ATen/ATen.h>

#include <exception>
#include <stdexcept>
#include <vector>

namespace tokbench::distributed {
namespace {

std::vector<int64_t> encode(const train::GemmChoices& choices) {
  std::vector<int64_t> code{choices.everywhere ? static_cast<int64_t>(*choices.everywhere) : -1,
                            choices.from_cache ? 1 : 0, static_cast<int64_t>(choices.by_class.size())};
  for (const auto& [key, kernel] : choices.by_class) {
    code.push_back(static_cast<int64_t>(kernel));
    code.push_back(static_cast<int64_t>(key.size()));
    for (const char ch : key) code.push_back(static_cast<unsigned char>(ch));
  }
  return code;
}

train::GemmKernel kernel_of(int64_t value) {
  TORCH_INTERNAL_ASSERT(value == static_cast<int64_t>(train::GemmKernel::aten) ||
                            value == static_cast<int64_t>(train::GemmKernel::onednn),
                        "rank 0 sent an unknown GEMM kernel ", value);
  return static_cast<train::GemmKernel>(value);
}

train::GemmChoices decode(const std::vector<int64_t>& code) {
  train::GemmChoices choices;
  std::size_t at = 0;
  auto next = [&] {
    TORCH_INTERNAL_ASSERT(at < code.size(), "rank 0's GEMM choice ended early");
    return code[at++];
  };
  const int64_t everywhere = next();
  if (everywhere >= 0) choices.everywhere = kernel_of(everywhere);
  choices.from_cache = next() != 0;
  const int64_t classes = next();
  for (int64_t c = 0; c < classes; ++c) {
    const train::GemmKernel kernel = kernel_of(next());
    const int64_t length = next();
    std::string key;
    for (int64_t i = 0; i < length; ++i) key.push_back(static_cast<char>(next()));
    choices.by_class.emplace(std::move(key), kernel);
  }
  return choices;
}

void broadcast_from_rank0(c10d::Backend& world, at::Tensor& tensor) {
  std::vector<at::Tensor> one{tensor};
  world.broadcast(one)->wait();  // the default root is rank 0
}

}  // namespace

train::GemmChoices gemm_choice_of_rank0(c10d::Backend& world, int64_t rank, const c10::Device& device,
                                        const std::function<train::GemmChoices()>& measure) {
  const auto int64_on_device = at::TensorOptions().dtype(at::kLong).device(device);
  std::vector<int64_t> code;
  std::exception_ptr failure;
  if (rank == 0) {
    try {
      code = encode(measure());
    } catch (...) {
      failure = std::current_exception();
    }
  }
  at::Tensor length = at::full({1}, failure ? int64_t{-1} : static_cast<int64_t>(code.size()), int64_on_device);
  broadcast_from_rank0(world, length);
  if (failure) std::rethrow_exception(failure);
  const int64_t n = length.cpu().item<int64_t>();
  if (n < 0)
    throw std::runtime_error("rank 0 could not measure the fused executor's GEMM kernels (its log says why)");
  at::Tensor payload = rank == 0 ? at::tensor(code, at::kLong).to(device) : at::empty({n}, int64_on_device);
  broadcast_from_rank0(world, payload);
  if (rank == 0) return decode(code);  // the same round trip as the other ranks'
  const at::Tensor received = payload.cpu();
  const int64_t* data = received.data_ptr<int64_t>();
  return decode(std::vector<int64_t>(data, data + n));
}

}  // namespace tokbench::distributed
