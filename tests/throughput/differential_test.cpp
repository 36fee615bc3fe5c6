// Differential test against real Lightning: replays every case of the committed fixture
// (scripts/reference/throughput_differential.py) and requires the same key order, bit-identical
// doubles (compared as IEEE-754 bit patterns), the same int-ness, and identical error texts.
// Flops keep their Python type: JSON ints go through the integer update() overload, floats
// through the double one. The fixture itself must come from that script with the Lightning
// pinned in scripts/reference/requirements.txt (docs/throughput.md, "Tests and reference").
#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>
#include <string>

#include "tokbench/throughput.hpp"

namespace tokbench {
namespace {

using nlohmann::json;

const json& fixture() {
  static const json data = [] {
    std::ifstream in(TOKBENCH_THROUGHPUT_FIXTURE);
    if (!in) throw std::runtime_error("cannot open " TOKBENCH_THROUGHPUT_FIXTURE);
    return json::parse(in);
  }();
  return data;
}

double from_bits(const std::string& hex) {
  return std::bit_cast<double>(static_cast<uint64_t>(std::stoull(hex, nullptr, 16)));
}

std::string to_bits(double v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx",
                static_cast<unsigned long long>(std::bit_cast<uint64_t>(v)));
  return buf;
}

// Python exception type name for what we threw.
template <typename F>
std::optional<std::pair<std::string, std::string>> run_caught(F&& f) {
  try {
    f();
  } catch (const AssertionError& e) {
    return std::pair{std::string("AssertionError"), std::string(e.what())};
  } catch (const ValueError& e) {
    return std::pair{std::string("ValueError"), std::string(e.what())};
  } catch (const RuntimeError& e) {
    return std::pair{std::string("RuntimeError"), std::string(e.what())};
  } catch (const IndexError& e) {
    return std::pair{std::string("IndexError"), std::string(e.what())};
  }
  return std::nullopt;
}

void expect_error(const json& record, const std::optional<std::pair<std::string, std::string>>& got,
                  const std::string& where) {
  if (record.contains("error") || record.contains("ctor_error")) {
    const json& err = record.contains("error") ? record["error"] : record["ctor_error"];
    ASSERT_TRUE(got.has_value()) << where << ": expected " << err.dump();
    EXPECT_EQ(got->first, err["type"].get<std::string>()) << where;
    EXPECT_EQ(got->second, err["message"].get<std::string>()) << where;
  } else {
    EXPECT_FALSE(got.has_value()) << where << ": unexpected " << got->first << ": " << got->second;
  }
}

std::string read_source_file(const std::string& relative) {
  const std::string path = std::string(TOKBENCH_SOURCE_DIR) + "/" + relative;
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot open " + path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// The value pinned for `package` in a pip requirements file ("package==X"), or "" if absent.
std::string pinned_version(const std::string& requirements, const std::string& package) {
  std::istringstream lines(requirements);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind(package + "==", 0) != 0) continue;
    std::string version = line.substr(package.size() + 2);
    const auto end = version.find_first_of(" \t#;");
    return end == std::string::npos ? version : version.substr(0, end);
  }
  return "";
}

// The fixture must come from the generator in this repository, run on the Lightning pinned in
// scripts/reference/requirements.txt: a hand-edited or stale fixture, or a pin bumped without
// regenerating it, fails here (regenerating with the pinned set reproduces the file exactly).
TEST(Differential, FixtureIsFromLightning) {
  const json& f = fixture();
  const std::string generator = f["generator"].get<std::string>();
  EXPECT_EQ(generator, "scripts/reference/throughput_differential.py");
  const std::string script = read_source_file(generator);
  // The version is Lightning's own __version__ as the script imported it, not a typed string.
  EXPECT_NE(script.find("\"lightning_version\": lightning.__version__"), std::string::npos)
      << generator << " no longer records lightning.__version__";
  EXPECT_NE(script.find("from lightning.fabric.utilities.throughput import Throughput"), std::string::npos)
      << generator << " no longer replays Lightning's Throughput";
  // Re-running the script with its default seed reproduces these cases.
  EXPECT_NE(script.find("\"--seed\", type=int, default=" + std::to_string(f["seed"].get<int64_t>())),
            std::string::npos)
      << "the fixture's seed " << f["seed"] << " is not " << generator << "'s default";

  const std::string pinned = pinned_version(read_source_file("scripts/reference/requirements.txt"), "lightning");
  ASSERT_FALSE(pinned.empty()) << "scripts/reference/requirements.txt pins no lightning==X";
  EXPECT_EQ(f["lightning_version"].get<std::string>(), pinned)
      << "the fixture was made with Lightning " << f["lightning_version"] << " but " << pinned
      << " is pinned: regenerate it with " << generator;
  EXPECT_GE(f["cases"].size(), 200u);
  RecordProperty("lightning_version", f["lightning_version"].get<std::string>());
}

TEST(Differential, PythonReprMatchesCPython) {
  for (const json& c : fixture()["repr_cases"]) {
    const double v = from_bits(c[0].get<std::string>());
    EXPECT_EQ(python_repr(v), c[1].get<std::string>()) << c[0];
  }
}

TEST(Differential, ReplayMatchesLightningBitForBit) {
  WarningSink previous = set_warning_sink([](std::string_view) {});  // dense-model notices
  std::size_t computes = 0, errors = 0, values = 0;
  std::size_t int_flops_past_2_53 = 0, mixed_cases = 0, wide_world_cases = 0;
  const json& cases = fixture()["cases"];
  for (std::size_t ci = 0; ci < cases.size(); ++ci) {
    const json& c = cases[ci];
    const json& ctor = c["ctor"];
    ThroughputOptions options;
    if (!ctor["available_flops"].is_null()) options.available_flops = ctor["available_flops"].get<double>();
    options.world_size = ctor["world_size"].get<int64_t>();
    options.window_size = ctor["window_size"].get<int64_t>();
    options.separator = ctor["separator"].get<std::string>();
    wide_world_cases += options.world_size > 64;
    bool int_flops = false, float_flops = false;
    std::optional<Throughput> tp;
    auto ctor_error = run_caught([&] { tp.emplace(options); });
    expect_error(c, ctor_error, "case " + std::to_string(ci) + " ctor");
    if (ctor_error) {
      ++errors;
      continue;
    }
    const json& ops = c["ops"];
    for (std::size_t oi = 0; oi < ops.size(); ++oi) {
      const json& op = ops[oi];
      const std::string where = "case " + std::to_string(ci) + " op " + std::to_string(oi);
      const std::string kind = op["op"].get<std::string>();
      if (kind == "update") {
        std::optional<int64_t> lengths;
        if (op.contains("lengths")) lengths = op["lengths"].get<int64_t>();
        const double time = op["time"].get<double>();
        const auto batches = op["batches"].get<int64_t>();
        const auto samples = op["samples"].get<int64_t>();
        std::function<void()> update = [&] { tp->update(time, batches, samples, lengths); };
        if (op.contains("flops") && op["flops"].is_number_integer()) {  // Python int
          const json& f = op["flops"];
          ASSERT_FALSE(f.is_number_unsigned() && f.get<uint64_t>() > INT64_MAX)
              << where << ": int flops outside int64";
          const auto flops = f.get<int64_t>();
          int_flops = true;
          int_flops_past_2_53 += flops > (int64_t{1} << 53) || flops < -(int64_t{1} << 53);
          update = [&, flops] { tp->update(time, batches, samples, lengths, flops); };
        } else if (op.contains("flops")) {  // Python float
          const auto flops = op["flops"].get<double>();
          float_flops = true;
          update = [&, flops] { tp->update(time, batches, samples, lengths, flops); };
        }
        auto err = run_caught(update);
        expect_error(op, err, where);
        errors += err.has_value();
      } else if (kind == "compute") {
        TypedMetrics got;
        auto err = run_caught([&] { got = tp->compute_typed(); });
        expect_error(op, err, where);
        errors += err.has_value();
        if (err) continue;
        ++computes;
        const json& want = op["result"];
        ASSERT_EQ(got.size(), want.size()) << where;
        for (std::size_t k = 0; k < got.size(); ++k) {
          EXPECT_EQ(got[k].first, want[k][0].get<std::string>()) << where << " key " << k;
          const json& v = want[k][1];
          if (v.is_number_integer()) {
            EXPECT_TRUE(got[k].second.is_integer) << where << " " << got[k].first;
            EXPECT_EQ(got[k].second.as_int(), v.get<int64_t>()) << where << " " << got[k].first;
          } else {
            EXPECT_FALSE(got[k].second.is_integer) << where << " " << got[k].first;
            EXPECT_EQ(to_bits(got[k].second.value), v.get<std::string>())
                << where << " " << got[k].first << " = " << python_repr(got[k].second.value)
                << " want " << python_repr(from_bits(v.get<std::string>()));
          }
          ++values;
        }
      } else {
        tp->reset();
      }
    }
    mixed_cases += int_flops && float_flops;
  }
  set_warning_sink(std::move(previous));
  // The fixture must exercise real work, not vacuously pass.
  EXPECT_GT(computes, 500u);
  EXPECT_GT(values, 4000u);
  EXPECT_GT(errors, 100u);
  EXPECT_GT(int_flops_past_2_53, 1000u);
  EXPECT_GT(mixed_cases, 40u);
  EXPECT_GT(wide_world_cases, 50u);
}

}  // namespace
}  // namespace tokbench
