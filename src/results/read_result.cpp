// Reading a run result back (read_result.hpp).
#include "results/read_result.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "results/result_columns.hpp"

namespace tokbench::results {
namespace {

[[noreturn]] void not_a_result(const std::filesystem::path& path, const std::string& what) {
  throw std::invalid_argument(fmt::format("'{}' is not a tokbench run result: {}", path.string(), what));
}

}  // namespace

nlohmann::json read_run_result(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) not_a_result(path, fmt::format("cannot read it ({})", std::strerror(errno)));
  std::stringstream text;
  text << in.rdbuf();
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text.str());
  } catch (const nlohmann::json::parse_error& e) {
    const std::string why = e.byte >= text.str().size() ? "it ends early (truncated?)" : "it is not JSON";
    not_a_result(path, fmt::format("{} at byte {} of {}", why, e.byte, text.str().size()));
  }
  if (!j.is_object() || !j.contains("schema_version") || !j.contains("status") || !j.contains("model_name"))
    not_a_result(path, "it is JSON without a result's schema_version, status and model_name (another program's?)");
  const auto& version = j["schema_version"];
  if (!version.is_number_integer() || version.get<int64_t>() < 1)
    not_a_result(path, fmt::format("schema_version {} is not a schema; valid: 1 to {}", version.dump(), kSchemaVersion));
  if (version.get<int64_t>() > kSchemaVersion)
    not_a_result(path, fmt::format("it was written by a newer tokbench (schema {}); this one reads schemas 1 to {}",
                                   version.get<int64_t>(), kSchemaVersion));
  if (!j["status"].is_string()) not_a_result(path, "its status is not text");
  return j;
}

}  // namespace tokbench::results
