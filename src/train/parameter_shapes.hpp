// A model's parameters as the parallel layout reads them (parallel/layout.hpp): in registration
// order (model->parameters(), the order the DDP and FSDP steps take them in), each with its
// element count, element size and the timed unit it is counted in (embedding, block i, head;
// unit_timing_pass.cpp's rule: a parameter shared between units counts in the first).
#pragma once

#include <vector>

#include "model/gpt.hpp"
#include "parallel/layout.hpp"

namespace tokbench::train {

std::vector<parallel::ParameterShape> parameter_shapes(const model::GPT& model);

}  // namespace tokbench::train
