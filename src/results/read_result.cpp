// Reading a run result back (read_result.hpp).
#include "results/read_result.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "results/result_columns.hpp"

namespace tokbench::results {
namespace {

using nlohmann::json;

[[noreturn]] void not_a_result(const std::filesystem::path& path, const std::string& what) {
  throw std::invalid_argument(fmt::format("'{}' is not a tokbench run result: {}", path.string(), what));
}

// How deep `text`'s arrays and objects nest (brackets inside strings do not count), counting
// only up to limit + 1: enough to refuse before the parser and the recursive code after it
// (dump, comparisons, copies) walk a million levels and overflow the stack.
int nesting_depth(std::string_view text, int limit) {
  int depth = 0, deepest = 0;
  bool in_string = false, escaped = false;
  for (const char c : text) {
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      deepest = std::max(deepest, ++depth);
      if (deepest > limit) return deepest;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return deepest;
}

// A value as compact JSON, cut short: a refusal stays one readable line whatever the file holds.
std::string short_text(const json& v) {
  const std::string text = v.dump(-1, ' ', false, json::error_handler_t::replace);
  return text.size() <= 40 ? text : text.substr(0, 37) + "...";
}

// nlohmann's message without its "[json.exception.out_of_range.406] " prefix.
std::string reason_of(const json::exception& e) {
  const std::string what = e.what();
  const std::size_t end = what.find("] ");
  return end == std::string::npos ? what : what.substr(end + 2);
}

// JSON text that is an object, or std::invalid_argument with the reason.
json parse_object(std::string_view text) {
  if (nesting_depth(text, kMaxRecordNesting) > kMaxRecordNesting)
    throw std::invalid_argument(fmt::format("it nests arrays or objects more than {} levels deep, far deeper than a "
                                            "result does (damaged, or another program's)",
                                            kMaxRecordNesting));
  json j;
  try {
    j = json::parse(text);
  } catch (const json::parse_error& e) {
    const std::string why = e.byte >= text.size() ? "it ends early (truncated?)" : "it is not JSON";
    throw std::invalid_argument(fmt::format("{} at byte {} of {}", why, e.byte, text.size()));
  } catch (const json::exception& e) {  // out_of_range.406: a number beyond a double (1e400)
    throw std::invalid_argument(fmt::format("it is JSON a result cannot hold: {}", reason_of(e)));
  }
  if (!j.is_object())
    throw std::invalid_argument(fmt::format("it is a JSON {}, not the object of a result's schema_version, status and "
                                            "model_name (another program's?)",
                                            j.type_name()));
  return j;
}

// The keys tokbench's readers go into or read as one type (compare's statistics and statuses,
// the tables, the store's columns), and the type a result holds there; every other key may
// hold anything (readers check a figure is a number before they use it).
struct TypedKey {
  const char* key;
  bool (*holds)(const json&);
  const char* what;
};
bool text(const json& v) { return v.is_string(); }
bool text_or_null(const json& v) { return v.is_string() || v.is_null(); }
bool object_or_null(const json& v) { return v.is_object() || v.is_null(); }
bool array_or_null(const json& v) { return v.is_array() || v.is_null(); }
bool number_or_null(const json& v) { return v.is_number() || v.is_null(); }
bool boolean(const json& v) { return v.is_boolean(); }

constexpr TypedKey kTypedKeys[] = {
    {"status", text, "text"},
    {"message", text_or_null, "text (or null)"},
    {"iterations", array_or_null, "an array of objects (or null)"},
    {"iter_time_ms", object_or_null, "an object (or null)"},
    {"config", object_or_null, "an object (or null)"},
    {"environment", object_or_null, "an object (or null)"},
    {"ranks", array_or_null, "an array (or null)"},
    {"sweep_config_id", text, "text"},
    {"sweep_options", object_or_null, "an object (or null)"},
};
constexpr TypedKey kIterationKeys[] = {
    {"index", number_or_null, "a number"},
    {"warmup", boolean, "a boolean"},
    {"time_ms", number_or_null, "a number (or null)"},
    {"loss", number_or_null, "a number (or null)"},
};

void check_types(const json& j) {
  auto holds = [](const json& v) {
    const std::string type = v.type_name();
    return type == "null" ? type : (type == "array" || type == "object" ? "an " : "a ") + type;
  };
  for (const auto& t : kTypedKeys) {
    const auto it = j.find(t.key);
    if (it != j.end() && !t.holds(*it))
      throw std::invalid_argument(fmt::format("its key '{}' holds {}, where a result holds {}", t.key, holds(*it), t.what));
  }
  const auto iterations = j.find("iterations");
  if (iterations == j.end() || !iterations->is_array()) return;
  for (std::size_t i = 0; i < iterations->size(); ++i) {
    const json& it = (*iterations)[i];
    if (!it.is_object())
      throw std::invalid_argument(fmt::format("its iterations[{}] is {}, where a result holds an object", i, holds(it)));
    for (const auto& t : kIterationKeys) {
      const auto field = it.find(t.key);
      if (field != it.end() && !t.holds(*field))
        throw std::invalid_argument(fmt::format("its key 'iterations[{}].{}' holds {}, where a result holds {}", i, t.key,
                                                holds(*field), t.what));
    }
  }
}

}  // namespace

json parse_run_record(std::string_view text) {
  json j = parse_object(text);
  check_types(j);
  return j;
}

json read_run_result(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) not_a_result(path, fmt::format("cannot read it ({})", std::strerror(errno)));
  std::stringstream buffer;
  buffer << in.rdbuf();
  const std::string text = buffer.str();
  json j;
  try {
    j = parse_object(text);
  } catch (const std::invalid_argument& e) {
    not_a_result(path, e.what());
  }
  // A sweep writes a row for a configuration that never produced a result (the run refused its
  // options, died, timed out): no schema_version, a status other than ok, its message.
  const bool sweep_row = !j.contains("schema_version") && j.contains("model_name") && j.contains("message") &&
                         j.contains("status") && j["status"].is_string() && j["status"] != "ok";
  if (!sweep_row) {
    if (!j.contains("schema_version") || !j.contains("status") || !j.contains("model_name"))
      not_a_result(path, "it is JSON without a result's schema_version, status and model_name (another program's?)");
    const auto& version = j["schema_version"];
    if (!version.is_number_integer() || version.get<int64_t>() < 1)
      not_a_result(path,
                   fmt::format("schema_version {} is not a schema; valid: 1 to {}", short_text(version), kSchemaVersion));
    if (version.get<int64_t>() > kSchemaVersion)
      not_a_result(path, fmt::format("it was written by a newer tokbench (schema {}); this one reads schemas 1 to {}",
                                     version.get<int64_t>(), kSchemaVersion));
  }
  try {
    check_types(j);
  } catch (const std::invalid_argument& e) {
    not_a_result(path, e.what());
  }
  return j;
}

}  // namespace tokbench::results
