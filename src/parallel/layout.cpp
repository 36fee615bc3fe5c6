// The DDP bucket and FSDP unit rules (layout.hpp).
#include "parallel/layout.hpp"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>
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

// The module tree that the parameter names spell (layout.hpp, by_size): each module's
// children in registration order and the elements of its subtree.
struct ModuleTree {
  struct Node {
    std::vector<std::string> children;  // paths, in the order their first parameter came
    int64_t elements = 0;               // of every parameter in the subtree
  };
  std::map<std::string, Node> nodes;  // by path; "" is the root

  explicit ModuleTree(const std::vector<ParameterShape>& parameters) {
    nodes[""];
    for (const auto& p : parameters) {
      std::string parent;
      nodes[parent].elements += p.elements;
      for (std::size_t dot = p.name.find('.'); dot != std::string::npos; dot = p.name.find('.', dot + 1)) {
        const std::string path = p.name.substr(0, dot);
        const bool is_new = nodes.find(path) == nodes.end();
        nodes[path].elements += p.elements;
        if (is_new) nodes[parent].children.push_back(path);
        parent = path;
      }
    }
  }

  // nn.ModuleList and nn.ModuleDict, which size_based_auto_wrap_policy never wraps: in litgpt
  // the ModuleDict "transformer" and the lists, whose children are numbered.
  bool container(const std::string& path) const {
    if (path == "transformer") return true;
    const Node& node = nodes.at(path);
    if (node.children.empty()) return false;
    return std::all_of(node.children.begin(), node.children.end(), [&](const std::string& child) {
      const std::string last = child.substr(path.empty() ? 0 : path.size() + 1);
      return !last.empty() && std::all_of(last.begin(), last.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
    });
  }

  // FSDP's recursive wrap under the size policy: returns the elements of `path`'s subtree now in
  // units, and adds the modules it wraps to `wrapped`. The root only wraps its children (FSDP
  // wraps the root itself around whatever is left).
  int64_t wrap(const std::string& path, int64_t min_params, bool is_root, std::set<std::string>& wrapped) const {
    const Node& node = nodes.at(path);
    // The policy descends only into a subtree big enough to hold a unit.
    if (node.elements < min_params) return 0;
    int64_t in_units = 0;
    for (const auto& child : node.children) in_units += wrap(child, min_params, false, wrapped);
    if (!is_root && node.elements - in_units >= min_params && !container(path)) {
      wrapped.insert(path);
      return node.elements;
    }
    return in_units;
  }

  // The wrapped modules in pre-order (named_modules()'s order).
  void preorder(const std::string& path, const std::set<std::string>& wrapped, std::vector<std::string>& out) const {
    if (wrapped.count(path)) out.push_back(path);
    for (const auto& child : nodes.at(path).children) preorder(child, wrapped, out);
  }
};

void layout_by_size(Layout& layout, int64_t min_params) {
  const ModuleTree tree(layout.parameters);
  std::set<std::string> wrapped;
  tree.wrap("", min_params, true, wrapped);
  std::vector<std::string> modules;
  tree.preorder("", wrapped, modules);
  std::map<std::string, std::size_t> index;  // module path -> position among the units after the root
  for (std::size_t m = 0; m < modules.size(); ++m) index[modules[m]] = m;
  CommUnit root = unit_named("root");
  std::vector<CommUnit> units;
  for (const auto& m : modules) units.push_back(unit_named(m));
  const int64_t n = static_cast<int64_t>(layout.parameters.size());
  for (int64_t i = 0; i < n; ++i) {
    // A parameter belongs to its innermost wrapped module, else to the root.
    CommUnit* owner = &root;
    const std::string& name = layout.parameters[i].name;
    for (std::size_t dot = name.find('.'); dot != std::string::npos; dot = name.find('.', dot + 1))
      if (const auto it = index.find(name.substr(0, dot)); it != index.end()) owner = &units[it->second];
    append(*owner, layout, i);
  }
  if (!root.parameters.empty()) layout.units.push_back(std::move(root));
  for (auto& unit : units) layout.units.push_back(std::move(unit));
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

Layout layout_fsdp_units(std::vector<ParameterShape> parameters, UnitPolicy policy, int64_t shard_size,
                         int64_t min_unit_params) {
  check_parameters(parameters, "FSDP units");
  if (shard_size <= 0)
    throw std::invalid_argument("--sharding-size " + std::to_string(shard_size) + " is not valid; valid: positive");
  if (policy == UnitPolicy::by_size && min_unit_params < 1)
    throw std::invalid_argument("--fsdp-bucket-params " + std::to_string(min_unit_params) +
                                " is not valid; valid: a positive whole number of parameters");
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
    case UnitPolicy::by_size:
      layout_by_size(layout, min_unit_params);
      break;
  }
  for (auto& unit : layout.units) unit.padded_elements = (unit.elements + shard_size - 1) / shard_size * shard_size;
  return layout;
}

Zero3Gathers zero3_gathers(const Layout& layout) {
  int64_t head = 0;
  for (const auto& p : layout.parameters) {
    if (p.timed_unit < 0)
      throw std::invalid_argument("ZeRO-3 gathers: parameter '" + p.name + "' has timed unit " +
                                  std::to_string(p.timed_unit) + "; valid: 0 or more");
    head = std::max(head, p.timed_unit);
  }
  Zero3Gathers g;
  std::vector<std::set<int64_t>> needs(static_cast<std::size_t>(head + 1));
  for (std::size_t u = 0; u < layout.units.size(); ++u)
    for (const int64_t i : layout.units[u].parameters) needs[layout.parameters[i].timed_unit].insert(static_cast<int64_t>(u));
  for (int64_t k = 0; k <= head; ++k)
    if (needs[k].empty())
      throw std::invalid_argument("ZeRO-3 gathers: timed unit " + std::to_string(k) + " of 0.." + std::to_string(head) +
                                  " holds no parameter");
  std::set<int64_t> kept(needs.front().begin(), needs.front().end());
  kept.insert(needs.back().begin(), needs.back().end());
  g.kept.assign(kept.begin(), kept.end());
  g.free_after_forward.resize(needs.size());
  for (int64_t k = 0; k <= head; ++k) {
    g.needs.emplace_back(needs[k].begin(), needs[k].end());
    if (k == 0 || k == head) continue;
    for (const int64_t u : needs[k])
      if (!kept.count(u) && !needs[k + 1].count(u)) g.free_after_forward[k].push_back(u);
  }
  return g;
}

}  // namespace tokbench::parallel
