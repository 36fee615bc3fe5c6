// Names of the time account's categories (category.hpp): the JSON name, the label and the phrase.
#include "account/category.hpp"

namespace tokbench::account {
namespace {

struct Names {
  std::string_view json;
  std::string_view label;
  std::string_view phrase;
};

// The one table of the categories' words: each category's JSON name is a key of the time
// account's `categories` (and of explain's), its label and phrase are what people read.
constexpr std::array<Names, kCategoryCount> kNames = {{
    {"gemm", "GEMMs", "GEMM time"},
    {"attention", "attention", "attention"},
    {"normalization", "normalization", "normalization"},
    {"elementwise", "elementwise and activations", "elementwise work"},
    {"loss", "loss (cross-entropy)", "loss"},
    {"optimizer", "optimizer", "optimizer time"},
    {"data_host", "data and host work", "data and host work"},
    {"exposed_comm", "exposed communication", "exposed communication"},
    {"device_idle", "device idle", "device idle time"},
    {"other", "other", "other time"},
}};

}  // namespace

std::string_view json_name(Category c) { return kNames[index_of(c)].json; }
std::string_view label(Category c) { return kNames[index_of(c)].label; }
std::string_view phrase(Category c) { return kNames[index_of(c)].phrase; }

std::optional<Category> category_named(std::string_view name) {
  for (const Category c : all_categories())
    if (json_name(c) == name) return c;
  return std::nullopt;
}

}  // namespace tokbench::account
