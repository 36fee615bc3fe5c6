// Names of the time account's categories (category.hpp).
#include "account/category.hpp"

namespace tokbench::account {
namespace {

struct Names {
  std::string_view json;
  std::string_view label;
};

constexpr std::array<Names, kCategoryCount> kNames = {{
    {"gemm", "GEMMs"},
    {"attention", "attention"},
    {"normalization", "normalization"},
    {"elementwise", "elementwise and activations"},
    {"loss", "loss (cross-entropy)"},
    {"optimizer", "optimizer"},
    {"data_host", "data and host work"},
    {"exposed_comm", "exposed communication"},
    {"device_idle", "device idle"},
    {"other", "other"},
}};

}  // namespace

std::string_view json_name(Category c) { return kNames[index_of(c)].json; }
std::string_view label(Category c) { return kNames[index_of(c)].label; }

std::optional<Category> category_named(std::string_view name) {
  for (const Category c : all_categories())
    if (json_name(c) == name) return c;
  return std::nullopt;
}

}  // namespace tokbench::account
