// The categories of the time account (docs/time-account.md): where one rank's iteration time
// goes. Every second of a profiled iteration lands in exactly one of them, "other" included,
// so they sum to the iteration. The JSON names are part of the result record and stay stable;
// a new category is added at the end of the enum, before `other`'s meaning changes.
#pragma once

#include <array>
#include <optional>
#include <string_view>

namespace tokbench::account {

enum class Category {
  gemm,           // every matmul and linear layer, forward and backward
  attention,      // SDPA kernels, or the explicit path's scores, mask and softmax
  normalization,  // LayerNorm, RMSNorm (ATen's, litgpt's op composition, the fused row kernel)
  elementwise,    // activations, residual adds, rotary embedding, copies, views, reductions, the embedding
  loss,           // cross-entropy: log-softmax and NLL, or the fused row kernel (the head's GEMM is gemm)
  optimizer,      // the AdamW step
  data_host,      // the batch and host work between iterations, outside every operator
  exposed_comm,   // waiting for collectives not hidden behind compute (distributed steps)
  device_idle,    // an accelerator waiting for the host (launch gaps); 0 on the CPU
  other,          // what no rule claims: unknown operators, host time between a step's operators
};

inline constexpr std::size_t kCategoryCount = 10;

// Every category in record order.
constexpr std::array<Category, kCategoryCount> all_categories() {
  return {Category::gemm,      Category::attention,    Category::normalization, Category::elementwise,
          Category::loss,      Category::optimizer,    Category::data_host,     Category::exposed_comm,
          Category::device_idle, Category::other};
}

constexpr std::size_t index_of(Category c) { return static_cast<std::size_t>(c); }

// "gemm", "attention", ... : the key in the JSON record.
std::string_view json_name(Category c);
// What people read in the report: "GEMMs", "data and host work", ...
std::string_view label(Category c);
// How explain's sentence names its time: "12.0 ms of <phrase>" ("GEMM time", "elementwise work", ...).
std::string_view phrase(Category c);
// The category of a JSON name; nullopt for a name this build does not know.
std::optional<Category> category_named(std::string_view name);

}  // namespace tokbench::account
