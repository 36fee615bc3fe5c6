// The `json` format: one document, {"context": ..., "runs": [...]}, every run as it came.
#include "sweep/reporters.hpp"

namespace tokbench::sweep::detail {

void write_json(const nlohmann::json& context, const std::vector<nlohmann::json>& runs, std::ostream& out) {
  nlohmann::json doc = nlohmann::json::object();
  doc["context"] = context;
  doc["runs"] = runs;
  // Invalid UTF-8 in a message (a crashed process's output) is replaced, not fatal.
  out << doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
}

}  // namespace tokbench::sweep::detail
