// `tokbench explain`'s work (explain_command.hpp).
#include "results/explain_command.hpp"

#include <fmt/format.h>

#include <stdexcept>
#include <variant>

#include "account/explanation.hpp"
#include "results/read_result.hpp"
#include "results/record_explanation.hpp"
#include "results/record_keys.hpp"
#include "usage/usage_error.hpp"
#include "results/report_keys.hpp"

namespace tokbench::results {
namespace {

// A count of the header line: 0 where the record has none (an explained run always has).
std::string count(const Field<Given>& f) {
  if (!f.value()) return "0";
  return std::visit([](const auto& v) { return fmt::format("{}", v); }, *f.value());
}

// The record at `path`. A document of exactly one run (what `tokbench predict --format json`
// writes for one measured run: {"context": ..., "runs": [record]}) is read as that run, so a
// prediction is explained as predict wrote it; anything else is read, and refused, as every
// reader of a record reads it.
RunRecord record_at(const std::string& path) {
  nlohmann::json doc;
  try {
    doc = parse_record_document(read_record_file(path));
  } catch (const std::invalid_argument&) {
    return read_result(path).record;  // its own refusal, naming the file
  }
  const auto runs = doc.is_object() && !doc.contains(key::schema_version) ? doc.find(report_key::runs) : doc.end();
  if (runs == doc.end() || !runs->is_array() || runs->size() != 1) return read_result(path).record;
  try {
    return check_run_record(runs->front());
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(fmt::format("{}: its one run is not a record: {}", usage::printable(path), e.what()));
  }
}

}  // namespace

void write_explanation_of(const std::string& base_path, const std::string& run_path, const std::string& format,
                          std::ostream& out) {
  usage::require_choice("--format", format, {kExplainFormats[0], kExplainFormats[1]});
  const RunRecord base = record_at(base_path);
  const RunRecord run = record_at(run_path);
  const account::Explanation e = explain_records(base, run, base_path, run_path);
  if (format == "json") {
    out << account::to_json(e).dump(2) << "\n";
    return;
  }
  out << fmt::format("# tokbench explain: {} against {} ({}, {} layers, T={}, B={}, {}, {} rank(s))\n", e.run_name,
                     e.base_name, run.model_name.value_or("?"), run.n_layer.value_or(0), count(run.seq_len),
                     count(run.micro_bs), run.dtype.value_or("?"), run.world_size.value_or(1));
  account::write_explanation(e, out);
}

}  // namespace tokbench::results
