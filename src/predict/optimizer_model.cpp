// The optimizer model (optimizer_model.hpp).
#include "predict/optimizer_model.hpp"

#include <algorithm>

#include "predict/prediction_keys.hpp"

namespace tokbench::predict {

namespace pk = prediction_key;

OptimizerWork unsharded_work(const std::vector<parallel::ParameterShape>& parameters) {
  OptimizerWork w;
  for (const auto& p : parameters) {
    ++w.tensors;
    w.elements += p.elements;
  }
  return w;
}

OptimizerWork sharded_work(const parallel::Layout& layout) {
  OptimizerWork w;
  const int64_t s = std::max<int64_t>(1, layout.shard_size);
  for (const auto& u : layout.units) {
    ++w.tensors;
    w.elements += u.padded_elements / s;
  }
  return w;
}

double optimizer_time_ratio(const OptimizerCostRates* rates, const OptimizerWork& m, const OptimizerWork& p,
                            double tensor_factor, double element_factor) {
  double a = rates ? std::max(0.0, rates->per_tensor_seconds) : 0.0;
  double b = rates ? std::max(0.0, rates->per_element_seconds) : 0.0;
  if (!(a > 0) && !(b > 0)) b = 1.0;
  const double measured = a * static_cast<double>(m.tensors) + b * static_cast<double>(m.elements);
  if (!(measured > 0)) return element_factor;
  return (a * static_cast<double>(p.tensors) * tensor_factor + b * static_cast<double>(p.elements) * element_factor) /
         measured;
}

nlohmann::ordered_json to_json(const OptimizerWork& work) {
  return {{pk::tensors, work.tensors}, {pk::elements, work.elements}};
}

}  // namespace tokbench::predict
