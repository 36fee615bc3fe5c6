// The DDP bucket and FSDP unit rules (layout.hpp).
#include "parallel/layout.hpp"

#include <algorithm>
#include <map>
#include <utility>
#include <stdexcept>

namespace tokbench::parallel {
namespace {

void check_parameters(const std::vector<ParameterShape>& parameters, const char* what) {
  if (parameters.empty()) throw std::invalid_argument(std::string(what) + ": the model has no parameters");
  for (const auto& p : parameters) {
    if (p.elements <= 0 || p.element_bytes <= 0)
      throw std::invalid_argument(std::string(what) + ": parameter '" + p.name + "' has " +
                                  std::to_string(p.elements) + " elements of " + std::to_string(p.element_bytes) +
                                  " bytes; valid: both positive");
    // One flat buffer holds one dtype (the steps' parameters share one).
    if (p.element_bytes != parameters.front().element_bytes)
      throw std::invalid_argument(std::string(what) + ": parameter '" + p.name + "' has " +
                                  std::to_string(p.element_bytes) + "-byte elements, the first " +
                                  std::to_string(parameters.front().element_bytes) + "; valid: one element size");
  }
}

// Appends parameter `index` to `unit`'s flat buffer.
void append(CommUnit& unit, const Layout& layout, int64_t index) {
  unit.parameters.push_back(index);
  unit.offsets.push_back(unit.elements);
  unit.elements += layout.parameters[index].elements;
  unit.element_bytes = layout.parameters[index].element_bytes;
}

CommUnit unit_named(std::string name) {
  CommUnit unit;
  unit.name = std::move(name);
  return unit;
}

std::string module_of(const std::string& parameter_name) {
  const auto dot = parameter_name.rfind('.');
  return dot == std::string::npos ? std::string() : parameter_name.substr(0, dot);
}

}  // namespace

Layout layout_ddp_buckets(std::vector<ParameterShape> parameters, int64_t bucket_cap_bytes) {
  check_parameters(parameters, "DDP buckets");
  if (bucket_cap_bytes <= 0)
    throw std::invalid_argument("--ddp-bucket-size " + std::to_string(bucket_cap_bytes) +
                                " bytes is not valid; valid: positive");
  Layout layout;
  layout.parameters = std::move(parameters);
  CommUnit current;
  auto close = [&] {
    if (current.parameters.empty()) return;
    current.name = "bucket." + std::to_string(layout.units.size());
    current.padded_elements = current.elements;
    layout.units.push_back(std::move(current));
    current = CommUnit{};
  };
  for (int64_t i = static_cast<int64_t>(layout.parameters.size()) - 1; i >= 0; --i) {
    const int64_t bytes = layout.parameters[i].elements * layout.parameters[i].element_bytes;
    if (!current.parameters.empty() && current.elements * current.element_bytes + bytes > bucket_cap_bytes) close();
    append(current, layout, i);
  }
  close();
  return layout;
}

Layout layout_fsdp_units(std::vector<ParameterShape> parameters, UnitPolicy policy, int64_t shard_size) {
  check_parameters(parameters, "FSDP units");
  if (shard_size <= 0)
    throw std::invalid_argument("--sharding-size " + std::to_string(shard_size) + " is not valid; valid: positive");
  Layout layout;
  layout.parameters = std::move(parameters);
  layout.shard_size = shard_size;
  const int64_t n = static_cast<int64_t>(layout.parameters.size());
  switch (policy) {
    case UnitPolicy::whole_model: {
      CommUnit model = unit_named("model");
      for (int64_t i = 0; i < n; ++i) append(model, layout, i);
      layout.units.push_back(std::move(model));
      break;
    }
    case UnitPolicy::per_block: {
      int64_t head = 0;  // the last timed unit
      for (const auto& p : layout.parameters) head = std::max(head, p.timed_unit);
      CommUnit root = unit_named("root");
      std::map<int64_t, CommUnit> blocks;  // by timed unit: forward order
      for (int64_t i = 0; i < n; ++i) {
        const int64_t unit = layout.parameters[i].timed_unit;
        if (unit == 0 || unit == head) {
          append(root, layout, i);
        } else {
          CommUnit& block = blocks[unit];
          if (block.name.empty()) block.name = "block." + std::to_string(unit - 1);
          append(block, layout, i);
        }
      }
      layout.units.push_back(std::move(root));
      for (auto& [unit, block] : blocks) layout.units.push_back(std::move(block));
      break;
    }
    case UnitPolicy::per_layer:
      for (int64_t i = 0; i < n; ++i) {
        const std::string module = module_of(layout.parameters[i].name);
        if (layout.units.empty() || layout.units.back().name != module) layout.units.push_back(unit_named(module));
        append(layout.units.back(), layout, i);
      }
      break;
  }
  for (auto& unit : layout.units) unit.padded_elements = (unit.elements + shard_size - 1) / shard_size * shard_size;
  return layout;
}

}  // namespace tokbench::parallel
