// Matrix parsing and expansion (matrix.hpp).
#include "sweep/matrix.hpp"

#include "sweep/option_rows.hpp"
#include "usage/usage_error.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <unordered_set>
#include <stdexcept>

#if defined(TOKBENCH_HAVE_TOMLPLUSPLUS)
#include <toml++/toml.h>
#endif

namespace tokbench::sweep {
namespace {

std::vector<std::string> split_commas(const std::string& text) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = text.find(',', start);
    parts.push_back(text.substr(start, comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return parts;
}

// FNV-1a over the canonical text: stable across runs and machines, short enough for a file name.
std::string stable_id(const std::vector<std::pair<std::string, std::string>>& options) {
  std::vector<std::pair<std::string, std::string>> sorted = options;
  std::sort(sorted.begin(), sorted.end());
  uint64_t hash = 1469598103934665603ull;
  for (const auto& [key, value] : sorted) {
    for (const char c : key + "=" + value + "\n") {
      hash ^= static_cast<unsigned char>(c);
      hash *= 1099511628211ull;
    }
  }
  return fmt::format("{:016x}", hash);
}

}  // namespace

std::string canonical_option(const std::string& name) {
  std::string out = name;
  out.erase(0, out.find_first_not_of('-'));
  std::replace(out.begin(), out.end(), '_', '-');
  return out;
}

std::vector<std::string> Configuration::run_arguments() const {
  std::vector<std::string> args;
  for (const auto& [option, value] : options) {
    if (value == "true" || value == "false" || value == "True" || value == "False") {
      args.push_back(fmt::format("--{}={}", option, value == "true" || value == "True" ? "True" : "False"));
    } else {
      args.push_back("--" + option);
      args.push_back(value);
    }
  }
  return args;
}

std::string Configuration::value_of(const std::string& option, const std::string& fallback) const {
  for (const auto& [key, value] : options)
    if (key == option) return value;
  return fallback;
}

std::string Configuration::value_of_row(const std::string& names, const std::string& fallback) const {
  std::size_t start = 0;
  while (start <= names.size()) {
    const std::size_t comma = std::min(names.find(',', start), names.size());
    const std::string name = names.substr(start, comma - start);
    start = comma + 1;
    if (name.empty() || name.front() == '!') continue;  // a flag's negation ("!--no-tf32") is not a name to read
    for (const auto& [key, value] : options)
      if (key == canonical_option(name)) return value;
  }
  return fallback;
}

std::string Configuration::describe() const {
  std::string text;
  for (const auto& [key, value] : options) text += (text.empty() ? "" : " ") + key + "=" + value;
  return text.empty() ? "(every option at its default)" : text;  // a sweep given no run option
}

Matrix matrix_from_arguments(const std::vector<std::string>& args) {
  Matrix m;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg.rfind("--", 0) != 0 || arg.size() < 3)
      throw std::invalid_argument(fmt::format("sweep: '{}' is not an option; valid: --name value, --name=value, "
                                              "--name a,b,c (an axis)", arg));
    std::string name, value;
    const std::size_t eq = arg.find('=');
    if (eq != std::string::npos) {
      name = arg.substr(0, eq);
      value = arg.substr(eq + 1);
    } else if (i + 1 < args.size() && args[i + 1].rfind("--", 0) != 0) {
      name = arg;
      value = args[++i];
    } else {
      name = arg;  // a bare flag
      value = "true";
    }
    if (name.rfind("--no-", 0) == 0 && eq == std::string::npos && value == "true") {
      name = "--" + name.substr(5);  // --no-ddp-overlap: the flag's false value
      value = "false";
    }
    Axis axis{canonical_option(name), split_commas(value)};
    for (const auto& v : axis.values)
      if (v.empty()) throw std::invalid_argument(fmt::format("sweep: {} has an empty value in '{}'", name, value));
    auto same = std::find_if(m.axes.begin(), m.axes.end(), [&](const Axis& a) { return a.option == axis.option; });
    if (same != m.axes.end()) {
      *same = axis;  // a repeated option takes its last value, as in `tokbench run`
    } else {
      m.axes.push_back(axis);
    }
  }
  return m;
}

#if defined(TOKBENCH_HAVE_TOMLPLUSPLUS)
namespace {

// Whether a TOML value is of a run option's type. By TOML's own types, not by the text the value
// becomes: `n-layers = 1.5` or `n-layers = "2"` is a mistake in the file, caught here rather than
// as a row the run refuses after the sweep has started.
bool toml_node_is(const toml::node& node, usage::ValueType type) {
  switch (type) {
    case usage::ValueType::text: return node.is_string();
    case usage::ValueType::whole_number: return node.is_integer();
    case usage::ValueType::number:
      return node.is_integer() || (node.is_floating_point() && std::isfinite(*node.value_exact<double>()));
    case usage::ValueType::boolean: return node.is_boolean();
  }
  return false;
}

// How the file wrote the value, for the refusal (a string in quotes, so "2" and 2 differ).
std::string toml_source_text(const toml::node& node) {
  if (node.is_string()) return "\"" + usage::printable(*node.value_exact<std::string>()) + "\"";
  if (node.is_boolean()) return *node.value_exact<bool>() ? "true" : "false";
  if (node.is_integer()) return std::to_string(*node.value_exact<int64_t>());
  if (node.is_floating_point()) {
    // As TOML writes a float: 4.0 stays "4.0", not the "4" an integer would show.
    std::string text = fmt::format("{}", *node.value_exact<double>());
    if (text.find_first_not_of("-0123456789") == std::string::npos) text += ".0";
    return text;
  }
  return "a table, array or date";
}

const char* toml_spelling(usage::ValueType type) {
  switch (type) {
    case usage::ValueType::text: return "a quoted string";
    case usage::ValueType::whole_number: return "a whole number, a TOML integer such as 2 (not 2.0 or \"2\")";
    case usage::ValueType::number: return "a finite number such as 0.5 or 1 (not quoted)";
    case usage::ValueType::boolean: return "true or false (not quoted)";
  }
  return "";
}

Matrix matrix_from_table(const toml::table& table, const std::filesystem::path& file, const OptionTypeOf& type_of) {
  Matrix m;
  // By node type, not value<T>(): toml++ converts between types there (an integer 9 reads as
  // the boolean true).
  auto scalar_text = [&](const toml::node& node, const std::string& key) -> std::string {
    if (node.is_string()) return *node.value_exact<std::string>();
    if (node.is_boolean()) return *node.value_exact<bool>() ? "true" : "false";
    if (node.is_integer()) return std::to_string(*node.value_exact<int64_t>());
    if (node.is_floating_point()) return fmt::format("{}", *node.value_exact<double>());
    throw std::invalid_argument(fmt::format("--matrix '{}': key '{}' holds a value that is not a string, number or "
                                            "boolean", file.string(), key));
  };
  // toml++ keeps keys sorted; the file's order (the axes' order) is each key's position.
  std::vector<std::pair<const toml::key*, const toml::node*>> entries;
  for (const auto& [key, node] : table) entries.emplace_back(&key, &node);
  std::sort(entries.begin(), entries.end(), [](const auto& a, const auto& b) {
    const auto& pa = a.first->source().begin;
    const auto& pb = b.first->source().begin;
    return pa.line != pb.line ? pa.line < pb.line : pa.column < pb.column;
  });
  for (const auto& [key_ptr, node_ptr] : entries) {
    const toml::key& key = *key_ptr;
    const toml::node& node = *node_ptr;
    if (key.str() == "matrix") continue;  // the [[matrix]] list, read by the caller
    Axis axis{canonical_option(std::string(key.str())), {}};
    // The option's type from the run's own table (which also refuses a key that is no option).
    const std::optional<usage::ValueType> type = type_of ? std::optional(type_of(axis.option)) : std::nullopt;
    const auto value_text = [&](const toml::node& value) {
      std::string text = scalar_text(value, axis.option);
      if (type && !toml_node_is(value, *type))
        throw std::invalid_argument(fmt::format("--matrix '{}': key '{}' = {} is not valid; valid: {}", file.string(),
                                                axis.option, toml_source_text(value), toml_spelling(*type)));
      return text;
    };
    if (const auto* list = node.as_array()) {
      for (const auto& element : *list) axis.values.push_back(value_text(element));
      if (axis.values.empty())
        throw std::invalid_argument(fmt::format("--matrix '{}': key '{}' is an empty list", file.string(), axis.option));
    } else {
      axis.values.push_back(value_text(node));
    }
    m.axes.push_back(axis);
  }
  return m;
}

}  // namespace
#endif

std::vector<Matrix> matrices_from_toml(const std::filesystem::path& file, const OptionTypeOf& type_of) {
#if defined(TOKBENCH_HAVE_TOMLPLUSPLUS)
  toml::table table;
  try {
    table = toml::parse_file(file.string());
  } catch (const toml::parse_error& e) {
    throw std::invalid_argument(fmt::format("--matrix '{}': {} (line {})", file.string(), e.description(),
                                            e.source().begin.line));
  }
  const Matrix base = matrix_from_table(table, file, type_of);
  const toml::node* list = table.get("matrix");
  if (list == nullptr) return {base};
  if (!list->is_array_of_tables())
    throw std::invalid_argument(fmt::format("--matrix '{}': 'matrix' must be an array of tables ([[matrix]])",
                                            file.string()));
  // Each [[matrix]] table is a copy of the top-level axes with its own keys over them, so a
  // file of many tables over a long top-level axis would be copied into memory without bound
  // (20000 tables over an axis of 10001 values ran out of 3 GiB) before expand_all counted it.
  // Every table is at least one configuration whatever the command line sets, so more tables
  // than kMaxConfigurations are refused at once; and the copies' values are bounded far above
  // what any sweep within kMaxConfigurations holds.
  const auto& tables = *list->as_array();
  if (tables.size() > kMaxConfigurations)
    throw std::invalid_argument(fmt::format("--matrix '{}': {} [[matrix]] tables, each at least one configuration; "
                                            "valid: at most {} configurations in one sweep (split it into several "
                                            "sweeps)", file.string(), tables.size(), kMaxConfigurations));
  constexpr std::size_t kMaxValues = 100 * kMaxConfigurations;
  std::size_t values = 0;
  std::vector<Matrix> out;
  for (std::size_t t = 0; t < tables.size(); ++t) {
    Matrix merged = merge(base, matrix_from_table(*tables[t].as_table(), file, type_of));
    for (const auto& axis : merged.axes) values += axis.values.size();
    if (values > kMaxValues)
      throw std::invalid_argument(fmt::format("--matrix '{}': its [[matrix]] tables, each over the top-level keys, hold "
                                              "more than {} values by table {}; valid: at most {} configurations in "
                                              "one sweep (split it into several sweeps)", file.string(), kMaxValues,
                                              t + 1, kMaxConfigurations));
    out.push_back(std::move(merged));
  }
  return out;
#else
  throw std::invalid_argument(fmt::format("--matrix '{}': this tokbench was built without toml++; pass the matrix "
                                          "as options (--name a,b) or install libtomlplusplus-dev", file.string()));
#endif
}

Matrix merge(const Matrix& base, const Matrix& overrides) {
  Matrix m = base;
  for (const auto& axis : overrides.axes) {
    auto same = std::find_if(m.axes.begin(), m.axes.end(), [&](const Axis& a) { return a.option == axis.option; });
    if (same != m.axes.end()) {
      *same = axis;
    } else {
      m.axes.push_back(axis);
    }
  }
  return m;
}

std::optional<std::size_t> configuration_count(const Matrix& matrix) {
  std::size_t total = 1;
  for (const auto& axis : matrix.axes) {
    const std::size_t n = std::max<std::size_t>(axis.values.size(), 1);
    if (total > std::numeric_limits<std::size_t>::max() / n) return std::nullopt;
    total *= n;
  }
  return total;
}

namespace {

// The product of the axes' lengths, as people read it: "3 x 40 x 100 = 12000".
std::string count_text(const Matrix& matrix) {
  std::string factors;
  for (const auto& axis : matrix.axes)
    if (axis.values.size() > 1) factors += fmt::format("{}{} {}", factors.empty() ? "" : " x ", axis.values.size(), axis.option);
  const auto total = configuration_count(matrix);
  return fmt::format("{} = {}", factors, total ? std::to_string(*total) : std::string("more than 2^64"));
}

// The options a one-rank point does not take (expand_all): a single rank runs undistributed.
void drop_distributed_options(std::vector<std::pair<std::string, std::string>>& options) {
  std::erase_if(options, [](const auto& option) {
    return option.first == "distributed-mode" || option.first == "shard-mode" || option.first == "bucketing-mode" ||
           option.first == "sharding-size" || option.first == "fsdp-bucket-params";
  });
}

// A whole number written in full, or nullopt.
std::optional<int64_t> whole_number(const std::string& text) {
  try {
    std::size_t used = 0;
    const long long n = std::stoll(text, &used);
    if (used == text.size()) return n;
  } catch (const std::exception&) {
  }
  return std::nullopt;
}

}  // namespace

std::vector<Matrix> sweep_matrices(const std::filesystem::path& matrix_file, const std::vector<std::string>& run_options,
                                   const OptionTypeOf& type_of) {
  const auto refuse_owned = [&](const Matrix& m, const std::string& where) {
    for (const auto& axis : m.axes)
      for (const char* owned : {"json-path", "return-metrics-as-json", "quiet"})
        if (axis.option == owned)
          throw std::invalid_argument(fmt::format("{}--{} is set by the sweep for each run; remove it", where, owned));
  };
  std::vector<Matrix> matrices{Matrix{}};
  if (!matrix_file.empty()) {
    matrices = matrices_from_toml(matrix_file, type_of);  // names and TOML types checked as it reads
    for (const auto& m : matrices) refuse_owned(m, fmt::format("--matrix '{}': ", matrix_file.string()));
  }
  const Matrix from_arguments = matrix_from_arguments(run_options);
  refuse_owned(from_arguments, "");
  // The command line's values are text: each must read as its option's type.
  if (type_of)
    for (const auto& axis : from_arguments.axes) {
      const usage::ValueType type = type_of(axis.option);
      for (const auto& value : axis.values)
        if (!usage::text_is(type, value))
          throw std::invalid_argument(fmt::format("--{} '{}' is not valid; valid: {}", axis.option,
                                                  usage::printable(value), usage::describe(type)));
    }
  for (auto& matrix : matrices) matrix = merge(matrix, from_arguments);
  return matrices;
}

std::vector<Configuration> expand(const Matrix& matrix, std::size_t limit) {
  // Counted from the axes before a single configuration is built.
  const auto counted = configuration_count(matrix);
  if (!counted || *counted > limit)
    throw std::invalid_argument(fmt::format("sweep: the matrix has {} configurations; valid: at most {} (split it into "
                                            "several sweeps)", count_text(matrix), limit));
  const std::size_t total = *counted;
  std::vector<Configuration> configs;
  configs.reserve(total);
  std::vector<std::size_t> position(matrix.axes.size(), 0);
  for (std::size_t n = 0; n < total; ++n) {
    Configuration c;
    for (std::size_t a = 0; a < matrix.axes.size(); ++a)
      c.options.emplace_back(matrix.axes[a].option, matrix.axes[a].values[position[a]]);
    c.id = stable_id(c.options);
    configs.push_back(std::move(c));
    for (std::size_t a = matrix.axes.size(); a-- > 0;) {  // the last axis varies fastest
      if (++position[a] < matrix.axes[a].values.size()) break;
      position[a] = 0;
    }
  }
  return configs;
}

Configuration make_configuration(std::vector<std::pair<std::string, std::string>> options) {
  Configuration c;
  c.options = std::move(options);
  c.id = stable_id(c.options);
  return c;
}

std::optional<Configuration> one_rank_source(const Configuration& config) {
  const auto nproc = whole_number(nproc_per_node_of(config));
  const auto nnodes = whole_number(nnodes_of(config));
  if (!nproc || !nnodes || *nproc < 1 || *nnodes < 1 || *nproc * *nnodes == 1) return std::nullopt;
  const int64_t ranks = *nproc * *nnodes;
  auto options = config.options;
  for (auto& [key, value] : options) {
    if (is_ranks_option(key)) value = "1";
    if (key == "global-batch-size") {
      const auto global = whole_number(value);
      if (!global || *global < 1 || *global % ranks != 0) return std::nullopt;
      value = std::to_string(*global / ranks);
    }
  }
  drop_distributed_options(options);
  return make_configuration(std::move(options));
}

std::vector<Configuration> expand_all(const std::vector<Matrix>& matrices, std::size_t limit) {
  // All matrices together, counted before any is expanded (duplicates between them count too:
  // the bound is on what the user wrote).
  std::size_t total = 0;
  for (const auto& matrix : matrices) {
    const auto counted = configuration_count(matrix);
    if (!counted || *counted > limit || total + *counted > limit)
      throw std::invalid_argument(fmt::format("sweep: the matrices have more than {} configurations ({}{}); valid: at "
                                              "most {} in one sweep (split it into several sweeps)", limit,
                                              matrices.size() > 1 ? "one of them: " : "", count_text(matrix), limit));
    total += *counted;
  }
  std::vector<Configuration> out;
  out.reserve(total);
  std::unordered_set<std::string> seen;
  for (const auto& matrix : matrices) {
    for (Configuration c : expand(matrix, limit)) {
      int64_t ranks = 1;
      try {
        ranks = std::stoll(nproc_per_node_of(c)) * std::stoll(nnodes_of(c));
      } catch (const std::exception&) {
        ranks = 0;  // not a number: left for `tokbench run` to refuse
      }
      if (ranks == 1) {
        drop_distributed_options(c.options);
        c.id = stable_id(c.options);
      }
      if (!seen.insert(c.id).second) continue;
      out.push_back(std::move(c));
    }
  }
  return out;
}

}  // namespace tokbench::sweep
