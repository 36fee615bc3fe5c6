// Helpers shared by the GPT tests: where the committed fixtures live, and the raw blob + JSON
// index format written by scripts/reference/litgpt_reference.py (little-endian float32/int64).
#pragma once

#include <nlohmann/json.hpp>
#include <torch/torch.h>

#include <cctype>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace tokbench::model::testing {

// A fixture family's name ("llama-3.1") as a GoogleTest parameter name ("llama_3_1").
inline std::string test_name(std::string name) {
  for (auto& ch : name)
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return name;
}

inline std::filesystem::path fixtures_dir() {
#if defined(TOKBENCH_FIXTURES_DIR)
  return TOKBENCH_FIXTURES_DIR;
#elif defined(TOKBENCH_SOURCE_DIR)
  return std::filesystem::path(TOKBENCH_SOURCE_DIR) / "tests" / "fixtures";
#else
  return std::filesystem::path(__FILE__).parent_path().parent_path() / "fixtures";
#endif
}

inline nlohmann::json read_json(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot open " + path.string());
  return nlohmann::json::parse(in);
}

// Every tensor of <stem>.bin by its index name, cloned out of the file buffer.
inline std::map<std::string, torch::Tensor> read_blob(const nlohmann::json& index, const std::filesystem::path& bin) {
  std::ifstream in(bin, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open " + bin.string());
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::map<std::string, torch::Tensor> out;
  for (const auto& entry : index) {
    const auto dtype = entry.at("dtype").get<std::string>() == "int64" ? torch::kLong : torch::kFloat;
    const auto shape = entry.at("shape").get<std::vector<int64_t>>();
    const auto offset = entry.at("offset").get<size_t>();
    const auto nbytes = entry.at("nbytes").get<size_t>();
    if (offset + nbytes > bytes.size()) throw std::runtime_error("blob too short for " + entry.at("name").get<std::string>());
    auto t = torch::empty(shape, torch::TensorOptions().dtype(dtype));
    if (static_cast<size_t>(t.nbytes()) != nbytes) throw std::runtime_error("size mismatch in blob index");
    std::memcpy(t.data_ptr(), bytes.data() + offset, nbytes);
    out.emplace(entry.at("name").get<std::string>(), t);
  }
  return out;
}

}  // namespace tokbench::model::testing
