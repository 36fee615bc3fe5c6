// A model's parameter shapes for the parallel layout (parameter_shapes.hpp).
#include "train/parameter_shapes.hpp"

#include <torch/torch.h>

#include <unordered_map>

namespace tokbench::train {

std::vector<parallel::ParameterShape> parameter_shapes(const model::GPT& model) {
  // Timed units in forward order: the embedding (the first root module), the blocks, then the
  // head (the final norm and lm_head); the first unit to hold a parameter keeps it.
  std::unordered_map<const c10::TensorImpl*, int64_t> unit_of;
  auto claim = [&](const std::shared_ptr<torch::nn::Module>& module, int64_t unit) {
    for (const auto& p : module->parameters()) unit_of.emplace(p.unsafeGetTensorImpl(), unit);
  };
  const auto roots = model->root_modules();  // the embedding, the final norm, the head
  const auto blocks = model->blocks();
  claim(roots.front(), 0);
  for (std::size_t b = 0; b < blocks.size(); ++b) claim(blocks[b], static_cast<int64_t>(b) + 1);
  const auto head = static_cast<int64_t>(blocks.size()) + 1;
  for (auto it = roots.begin() + 1; it != roots.end(); ++it) claim(*it, head);

  std::vector<parallel::ParameterShape> shapes;
  for (const auto& item : model->named_parameters()) {
    const at::Tensor& p = item.value();
    const auto unit = unit_of.find(p.unsafeGetTensorImpl());
    shapes.push_back({item.key(), p.numel(), static_cast<int64_t>(p.element_size()),
                      unit == unit_of.end() ? head : unit->second});
  }
  return shapes;
}

}  // namespace tokbench::train
