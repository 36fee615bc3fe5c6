// Reading a run result back (read_result.hpp).
#include "results/read_result.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <vector>

#include "account/time_account_json.hpp"
#include "results/result_columns.hpp"
#include "results/record_blocks.hpp"
#include "results/record_keys.hpp"

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

// Far more values than any record holds (a run of a million iterations writes ~6 million), and
// far more members than any array or object of one (the iterations: at most a million): JSON
// beyond them is refused while it is read, before a tree of it is built (a tree takes ~50 bytes
// a value: 50 MB of "0," would take 1.3 GB).
constexpr std::size_t kMaxRecordValues = std::size_t{1} << 24;
constexpr std::size_t kMaxRecordMembers = 1'000'001;

// Counts values and each container's members as the parser reads them, and stops it past the
// bounds above (why_ says which). Parse errors are left to the tree's parse, which names them.
class RecordShape : public nlohmann::json_sax<json> {
 public:
  std::string why_;

  bool null() override { return counted(); }
  bool boolean(bool) override { return counted(); }
  bool number_integer(number_integer_t) override { return counted(); }
  bool number_unsigned(number_unsigned_t) override { return counted(); }
  bool number_float(number_float_t, const string_t&) override { return counted(); }
  bool string(string_t&) override { return counted(); }
  bool binary(binary_t&) override { return counted(); }
  bool start_object(std::size_t) override { return opened(); }
  bool key(string_t&) override { return true; }
  bool end_object() override { return closed(); }
  bool start_array(std::size_t) override { return opened(); }
  bool end_array() override { return closed(); }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override { return false; }

 private:
  std::size_t values_ = 0;
  std::vector<std::size_t> members_;

  bool counted() {
    if (++values_ > kMaxRecordValues) {
      why_ = fmt::format("it holds more than {} values, far more than any result (damaged, or another program's)",
                         kMaxRecordValues);
      return false;
    }
    if (!members_.empty() && ++members_.back() > kMaxRecordMembers) {
      why_ = fmt::format("an array or object in it holds more than {} members, more than any result's (damaged, or "
                         "another program's)", kMaxRecordMembers - 1);
      return false;
    }
    return true;
  }
  bool opened() {
    if (!counted()) return false;
    members_.push_back(0);
    return true;
  }
  bool closed() {
    if (!members_.empty()) members_.pop_back();
    return true;
  }
};

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

// A character as a refusal may show it: control characters and bytes past ASCII as '?'.
char usage_printable_char(char c) {
  const auto byte = static_cast<unsigned char>(c);
  return byte < 0x20 || byte >= 0x7f ? '?' : c;
}

// The first character of JSON text past its blanks ('\0' for none): an object's '{', an
// array's '['; told before the text is parsed, so that a file of junk or of a million numbers is
// refused without building a tree of it.
char first_character(std::string_view text) {
  const std::size_t at = text.find_first_not_of(" \t\r\n");
  return at == std::string_view::npos ? '\0' : text[at];
}

// JSON text within the nesting limit and a double's range, or std::invalid_argument with the
// reason.
json parse_within_limits(std::string_view text) {
  if (nesting_depth(text, kMaxRecordNesting) > kMaxRecordNesting)
    throw std::invalid_argument(fmt::format("it nests arrays or objects more than {} levels deep, far deeper than a "
                                            "result does (damaged, or another program's)",
                                            kMaxRecordNesting));
  RecordShape shape;
  json::sax_parse(text, &shape, json::input_format_t::json, false);
  if (!shape.why_.empty()) throw std::invalid_argument(shape.why_);
  json j;
  try {
    j = json::parse(text);
  } catch (const json::parse_error& e) {
    const std::string why = e.byte >= text.size() ? "it ends early (truncated?)" : "it is not JSON";
    throw std::invalid_argument(fmt::format("{} at byte {} of {}", why, e.byte, text.size()));
  } catch (const json::exception& e) {  // out_of_range.406: a number beyond a double (1e400)
    throw std::invalid_argument(fmt::format("it is JSON a result cannot hold: {}", reason_of(e)));
  }
  return j;
}

// JSON text that is an object, or std::invalid_argument with the reason.
json parse_object(std::string_view text) {
  const char first = first_character(text);
  if (first == '[')
    throw std::invalid_argument("it is a JSON array, not the object of a result's schema_version, status and "
                                "model_name (another program's?)");
  if (first != '{' && first != '\0')
    throw std::invalid_argument(fmt::format("it is not JSON (it begins with '{}', where a result begins with '{{')",
                                            usage_printable_char(first)));
  json j = parse_within_limits(text);
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
    {key::status, text, "text"},
    {key::message, text_or_null, "text (or null)"},
    {key::iterations, array_or_null, "an array of objects (or null)"},
    {key::iter_time_ms, object_or_null, "an object (or null)"},
    {key::config, object_or_null, "an object (or null)"},
    {key::environment, object_or_null, "an object (or null)"},
    {key::ranks, array_or_null, "an array (or null)"},
    {key::sweep_config_id, text, "text"},
    {key::sweep_options, object_or_null, "an object (or null)"},
};
constexpr TypedKey kIterationKeys[] = {
    {block_key::index, number_or_null, "a number"},
    {block_key::warmup, boolean, "a boolean"},
    {block_key::time_ms, number_or_null, "a number (or null)"},
    {block_key::loss, number_or_null, "a number (or null)"},
};

// A record's time in milliseconds: finite (JSON has no inf, but 1e308 ms is not a time either),
// not negative, and at most the account's bound on seconds.
void check_milliseconds(const json& v, const std::string& key) {
  if (!v.is_number()) return;  // null: not measured
  const double ms = v.get<double>();
  if (!(ms >= 0 && ms <= account::kMaxAccountSeconds * 1e3))
    throw std::invalid_argument(fmt::format("its key '{}' is {}, where a result holds milliseconds from 0 to {:g}", key,
                                            short_text(v), account::kMaxAccountSeconds * 1e3));
}

// A time account (the record's, a rank's) as the account's reader takes it, values included.
void check_account(const json& record, const std::string& key) {
  const auto it = record.find(key::time_account);
  if (it == record.end() || it->is_null()) return;
  try {
    account::time_account_from_json(*it);
  } catch (const std::invalid_argument& e) {
    const std::string why = e.what();
    const std::string prefix = "time_account: ";
    throw std::invalid_argument(fmt::format("its {} is not an account a run writes: {}", key,
                                            why.rfind(prefix, 0) == 0 ? why.substr(prefix.size()) : why));
  } catch (const json::exception& e) {
    throw std::invalid_argument(fmt::format("its {} is not an account a run writes: {}", key, reason_of(e)));
  }
}

void check_values(const json& j) {
  if (const auto stats = j.find(key::iter_time_ms); stats != j.end() && stats->is_object())
    for (const auto& [name, value] : stats->items()) check_milliseconds(value, "iter_time_ms." + name);
  if (const auto average = j.find(key::average_iter_time); average != j.end()) check_milliseconds(*average, key::average_iter_time);
  if (const auto iterations = j.find(key::iterations); iterations != j.end() && iterations->is_array())
    for (std::size_t i = 0; i < iterations->size(); ++i)
      if (const auto t = (*iterations)[i].find(block_key::time_ms); t != (*iterations)[i].end())
        check_milliseconds(*t, fmt::format("iterations[{}].time_ms", i));
  check_account(j, key::time_account);
  if (const auto ranks = j.find(key::ranks); ranks != j.end() && ranks->is_array())
    for (std::size_t i = 0; i < ranks->size(); ++i)
      if ((*ranks)[i].is_object()) check_account((*ranks)[i], fmt::format("ranks[{}].time_account", i));
}

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
  const auto iterations = j.find(key::iterations);
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

// What makes an object a record a tokbench wrote: a result's schema_version (one this tokbench
// reads), status and model_name; or a sweep's row for a configuration that never produced a
// result (the run refused its options, died, timed out): no schema_version, a status other than
// ok, its message.
void check_identity(const json& j) {
  const bool sweep_row = !j.contains(key::schema_version) && j.contains(key::model_name) && j.contains(key::message) &&
                         j.contains(key::status) && j[key::status].is_string() && j[key::status] != "ok";
  if (sweep_row) return;
  if (!j.contains(key::schema_version) || !j.contains(key::status) || !j.contains(key::model_name))
    throw std::invalid_argument("it is JSON without a result's schema_version, status and model_name (another program's?)");
  const auto& version = j[key::schema_version];
  if (!version.is_number_integer() || version.get<int64_t>() < 1)
    throw std::invalid_argument(
        fmt::format("schema_version {} is not a schema; valid: 1 to {}", short_text(version), kSchemaVersion));
  if (version.get<int64_t>() > kSchemaVersion)
    throw std::invalid_argument(fmt::format("it was written by a newer tokbench (schema {}); this one reads schemas 1 to {}",
                                            version.get<int64_t>(), kSchemaVersion));
}

// The checks of a record's keys and values, and the record typed: the keys a reader goes into
// first (their messages say what a result holds there), then every key of the table as its
// member reads it, then the values of its times.
RunRecord checked_record(const json& j) {
  check_types(j);
  RunRecord record = record_from_json(j);
  check_values(j);
  return record;
}

}  // namespace

RunRecord check_run_record(const json& record) {
  if (!record.is_object())
    throw std::invalid_argument(fmt::format("it is {}, where a result is an object", short_text(record)));
  check_identity(record);
  return checked_record(record);
}

json parse_run_record(std::string_view text) {
  json j = parse_object(text);
  checked_record(j);
  return j;
}

std::string read_record_file(const std::filesystem::path& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::file_status status = fs::status(path, ec);
  if (ec) throw std::invalid_argument(fmt::format("cannot read it ({})", ec.message()));
  if (fs::is_directory(status))
    throw std::invalid_argument("it is a directory");
  if (!fs::is_regular_file(status))
    throw std::invalid_argument("it is not a regular file (a device, a pipe, a socket)");
  const std::uintmax_t size = fs::file_size(path, ec);
  if (ec) throw std::invalid_argument(fmt::format("cannot read it ({})", ec.message()));
  if (size > kMaxRecordFileBytes)
    throw std::invalid_argument(fmt::format("it is {:.1f} MB, far larger than any record (at most {:.0f} MB: a run of "
                                            "a million iterations writes about 200 MB); not read",
                                            static_cast<double>(size) / 1e6, static_cast<double>(kMaxRecordFileBytes) / 1e6));
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::invalid_argument(fmt::format("cannot read it ({})", std::strerror(errno)));
  // One buffer of the file's size (a stream buffer grows by doubling and is copied once more).
  std::string text(static_cast<std::size_t>(size), '\0');
  in.read(text.data(), static_cast<std::streamsize>(size));
  if (in.bad()) throw std::invalid_argument(fmt::format("cannot read it ({})", std::strerror(errno)));
  text.resize(static_cast<std::size_t>(in.gcount()));  // shorter if it shrank since; never read past the bound
  return text;
}

json parse_record_document(std::string_view text) {
  const char first = first_character(text);
  if (first != '{' && first != '[' && first != '\0')
    throw std::invalid_argument(fmt::format("it is not JSON (it begins with '{}')", usage_printable_char(first)));
  return parse_within_limits(text);
}

json read_run_result(const std::filesystem::path& path) { return read_result(path).json; }

RunResult read_result(const std::filesystem::path& path) {
  json j;
  try {
    j = parse_object(read_record_file(path));
  } catch (const std::invalid_argument& e) {
    not_a_result(path, e.what());
  }
  RunRecord record;
  try {
    record = check_run_record(j);
  } catch (const std::invalid_argument& e) {
    not_a_result(path, e.what());
  }
  return {std::move(j), std::move(record)};
}

}  // namespace tokbench::results
