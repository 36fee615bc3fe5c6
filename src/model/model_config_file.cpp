// load_model_config: a custom model from a TOML (.toml) or JSON (any other extension) file of
// litgpt Config fields. TOML is converted to JSON and read through the same field table as the
// catalog, then finalized with litgpt's rules. All problems (syntax, unknown names, types,
// unsupported features, derivation errors) are reported together in one std::invalid_argument.
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <sstream>
#include <stdexcept>

#ifdef TOKBENCH_HAVE_TOMLPLUSPLUS
#include <toml++/toml.h>
#endif

#include "model/catalog.hpp"
#include "model/catalog_keys.hpp"
#include "model/config_json.hpp"
#include "model/counting.hpp"

namespace tokbench::model {
namespace {

#ifdef TOKBENCH_HAVE_TOMLPLUSPLUS
nlohmann::json toml_to_json(const toml::node& node) {
  if (const auto* table = node.as_table()) {
    nlohmann::json out = nlohmann::json::object();
    for (const auto& [key, value] : *table) out[std::string(key.str())] = toml_to_json(value);
    return out;
  }
  if (const auto* array = node.as_array()) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& value : *array) out.push_back(toml_to_json(value));
    return out;
  }
  if (const auto* v = node.as_integer()) return v->get();
  if (const auto* v = node.as_floating_point()) return v->get();
  if (const auto* v = node.as_boolean()) return v->get();
  if (const auto* v = node.as_string()) return v->get();
  // Dates and times have no litgpt meaning; converting them to a marker string lets the field
  // type check report them by name like any other wrong type.
  return "<TOML date/time>";
}
#endif

bool is_toml(const std::filesystem::path& path) { return path.extension() == ".toml"; }

}  // namespace

Config load_model_config(const std::filesystem::path& path) {
  const std::string where = fmt::format("model config file {}", path.string());
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw std::invalid_argument(fmt::format("{}: cannot read the file (valid: a readable .toml or .json file)", where));
  std::stringstream buffer;
  buffer << in.rdbuf();
  const std::string text = buffer.str();

  nlohmann::json fields;
  if (is_toml(path)) {
#ifdef TOKBENCH_HAVE_TOMLPLUSPLUS
    try {
      fields = toml_to_json(toml::parse(text, path.string()));
    } catch (const toml::parse_error& e) {
      const auto& begin = e.source().begin;
      throw std::invalid_argument(fmt::format("{}: TOML syntax error at line {}, column {}: {}", where, begin.line,
                                              begin.column, e.description()));
    }
#else
    throw std::invalid_argument(fmt::format(
        "{}: this tokbench was built without toml++; write the model config as JSON", where));
#endif
  } else {
    try {
      fields = nlohmann::json::parse(text);
    } catch (const nlohmann::json::parse_error& e) {
      throw std::invalid_argument(fmt::format("{}: JSON syntax error: {}", where, e.what()));
    }
  }

  Config config;
  std::vector<std::string> problems;
  // param_count, when given, is checked against our count below; source is documentation.
  config_from_json(fields, config, problems, {catalog_key::param_count, catalog_key::source});
  if (config.name.empty()) config.name = path.stem().string();
  // Derivation runs even after field errors (a bad field keeps its default) so that one run
  // reports everything wrong with the file.
  if (fields.is_object()) {
    try {
      config.finalize();
    } catch (const std::invalid_argument& e) {
      // finalize() says "invalid model config 'NAME': a; b"; keep the list after the colon.
      const std::string message = e.what();
      const auto colon = message.find("': ");
      problems.push_back(colon == std::string::npos ? message : message.substr(colon + 3));
    }
  }
  if (problems.empty() && fields.is_object() && fields.contains(catalog_key::param_count)) {
    const auto& expected = fields[catalog_key::param_count];
    const int64_t counted = count_params(config).total;
    if (!expected.is_number_integer() || expected.get<int64_t>() != counted)
      problems.push_back(fmt::format("param_count={} does not match the {} parameters these fields give",
                                     expected.dump(), counted));
  }
  if (!problems.empty()) {
    std::string message = fmt::format("{}: {} invalid field{}: ", where, problems.size(), problems.size() > 1 ? "s" : "");
    for (std::size_t i = 0; i < problems.size(); ++i) message += (i ? "; " : "") + problems[i];
    throw std::invalid_argument(message);
  }
  return config;
}

}  // namespace tokbench::model
