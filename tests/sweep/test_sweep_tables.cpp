// build_tables: the reference's pivot (one row per configuration, one column per executor in
// order of first appearance), failed runs showing their status, missing cells, the
// only-varying-columns option; and the small pieces around it (formats, per-run columns).
#include <gtest/gtest.h>

#include <set>
#include <sstream>

#include "results/tables.hpp"

namespace tokbench::results {
namespace {

using nlohmann::json;

// A run document with the keys of docs/run.md that the tables read.
json run(const std::string& compiler, int ranks, int seq_len, double iter_ms, const std::string& status = "ok") {
  const int micro = 1, ga = 1;
  const int global = micro * ga * ranks;
  const bool ok = status == "ok";
  const double tokens = ok ? global * seq_len / (iter_ms / 1e3) : 0;
  json j;
  j["average_iter_time"] = ok ? json(iter_ms) : json(nullptr);
  j["tokens_per_sec"] = ok ? json(tokens) : json(nullptr);
  j["memory_used_GB"] = ok ? json(1.25 * ranks) : json(nullptr);
  j["model_name"] = "pythia-14m";
  j["Num GPUS"] = ranks;
  j["Seq Len"] = seq_len;
  j["Micro BS"] = micro;
  j["Global BS"] = global;
  j["GA"] = ga;
  j["Distributed Mode"] = ranks > 1 ? "ddp" : "none";
  j["Sharding Size"] = nullptr;
  j["compiler"] = compiler;
  j["status"] = status;
  j["message"] = ok ? "" : "out of memory";
  j["tokens_per_sec_per_device"] = ok ? json(tokens / ranks) : json(nullptr);
  j["model_TFLOP_per_s_per_device"] = ok ? json(0.5) : json(nullptr);
  j["mfu"] = ok ? json(0.125) : json(nullptr);
  j["n_layer"] = 6;
  j["dtype"] = "fp32";
  return j;
}

const PivotTable& table(const std::vector<PivotTable>& tables, const std::string& key) {
  for (const auto& t : tables)
    if (t.metric_key == key) return t;
  throw std::runtime_error("no table " + key);
}

TEST(BuildTables, TitlesKeysAndIndexInTheReferenceOrder) {
  const auto tables = build_tables({run("eager", 1, 512, 100)}, {});
  const std::vector<std::pair<std::string, std::string>> expected = {
      {"AVERAGE ITERATION TIME (ms)", "average_iter_time"},
      {"THROUGHPUT (tokens/s)", "tokens_per_sec"},
      {"NORMALIZED THROUGHPUT (tokens/s/GPU)", "tokens_per_sec_per_device"},
      {"MEMORY ALLOCATED (GB)", "memory_used_GB"},
      {"TFLOP/s PER DEVICE", "model_TFLOP_per_s_per_device"},
      {"MFU (%)", "mfu"},
      {"STATUS", "status"}};
  ASSERT_EQ(tables.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(tables[i].title, expected[i].first);
    EXPECT_EQ(tables[i].metric_key, expected[i].second);
    EXPECT_EQ(tables[i].index_columns,
              (std::vector<std::string>{"model_name", "Num GPUS", "Seq Len", "Micro BS", "Global BS", "GA",
                                        "Distributed Mode", "Sharding Size"}));
  }
  const auto& row = tables[0].rows.at(0);
  EXPECT_EQ(row.index, (std::vector<std::string>{"pythia-14m", "1", "512", "1", "1", "1", "none", "none"}));
  EXPECT_EQ(row.index_values.at(1), json(1));
  EXPECT_TRUE(row.index_values.at(7).is_null());
}

TEST(BuildTables, PivotsByExecutorInOrderOfFirstAppearance) {
  // fused appears first, so it is the first column although "eager" sorts before it.
  const std::vector<json> runs = {run("fused", 1, 512, 80), run("eager", 1, 512, 100), run("eager", 2, 512, 110),
                                  run("fused", 2, 512, 90)};
  const auto tables = build_tables(runs, {});
  const auto& t = table(tables, "average_iter_time");
  EXPECT_EQ(t.executors, (std::vector<std::string>{"fused", "eager"}));
  ASSERT_EQ(t.rows.size(), 2u);  // one row per configuration (1 and 2 ranks)
  EXPECT_EQ(t.rows[0].index[1], "1");
  EXPECT_EQ(t.rows[1].index[1], "2");
  EXPECT_EQ(t.rows[0].cells[0], json(80.0));
  EXPECT_EQ(t.rows[0].cells[1], json(100.0));
  EXPECT_EQ(t.rows[1].cells[0], json(90.0));
  EXPECT_EQ(t.rows[1].cells[1], json(110.0));
  EXPECT_EQ(t.rows[1].index[6], "ddp");
}

TEST(BuildTables, FailedRowsShowTheirStatusInEveryMetricTable) {
  const std::vector<json> runs = {run("eager", 1, 512, 100), run("eager", 1, 2048, 0, "oom"),
                                  run("fused", 1, 2048, 0, "invalid")};
  const auto tables = build_tables(runs, {});
  for (const auto& t : tables) {
    ASSERT_EQ(t.rows.size(), 2u) << t.title;
    EXPECT_EQ(t.rows[1].cells[0], json("oom")) << t.title;
    EXPECT_EQ(t.rows[1].cells[1], json("invalid")) << t.title;
  }
  const auto& status = table(tables, "status");
  EXPECT_EQ(status.rows[0].cells[0], json("ok"));
  EXPECT_FALSE(status.rows[0].cells[1].has_value());
  EXPECT_TRUE(table(tables, "tokens_per_sec").rows[0].cells[0]->is_number());
}

TEST(BuildTables, MissingCellsAreEmptyAndNullValuesStayNull) {
  json no_peak = run("fused", 2, 512, 90);
  no_peak["mfu"] = nullptr;  // finished, but no known peak
  const std::vector<json> runs = {run("eager", 1, 512, 100), no_peak};
  const auto tables = build_tables(runs, {});
  const auto& mfu = table(tables, "mfu");
  ASSERT_EQ(mfu.rows.size(), 2u);
  EXPECT_FALSE(mfu.rows[0].cells[1].has_value());  // fused never ran on 1 rank
  EXPECT_FALSE(mfu.rows[1].cells[0].has_value());  // eager never ran on 2 ranks
  ASSERT_TRUE(mfu.rows[1].cells[1].has_value());
  EXPECT_TRUE(mfu.rows[1].cells[1]->is_null());
  EXPECT_DOUBLE_EQ(mfu.rows[0].cells[0]->get<double>(), 12.5);  // a percentage
}

TEST(BuildTables, OnlyVaryingColumns) {
  const std::vector<json> runs = {run("eager", 1, 512, 100), run("eager", 2, 512, 110), run("eager", 2, 1024, 200)};
  TableOptions options;
  options.only_varying_columns = true;
  const auto tables = build_tables(runs, options);
  // Ranks, sequence length, global batch and distributed mode vary; the rest do not.
  EXPECT_EQ(tables[0].index_columns,
            (std::vector<std::string>{"Num GPUS", "Seq Len", "Global BS", "Distributed Mode"}));
  ASSERT_EQ(tables[0].rows.size(), 3u);
  EXPECT_EQ(tables[0].rows[2].index, (std::vector<std::string>{"2", "1024", "2", "ddp"}));
  EXPECT_EQ(tables[0].rows[2].index_values.size(), 4u);
  // All columns by default.
  EXPECT_EQ(build_tables(runs, {})[0].index_columns.size(), 8u);
  // One configuration: the model still names the row.
  const auto single = build_tables({run("eager", 1, 512, 100), run("fused", 1, 512, 90)}, options);
  EXPECT_EQ(single[0].index_columns, (std::vector<std::string>{"model_name"}));
  EXPECT_EQ(single[0].rows.at(0).cells.size(), 2u);
}

TEST(BuildTables, ShardingSizeNullReadsNone) {
  json hybrid = run("eager", 4, 512, 100);
  hybrid["Distributed Mode"] = "fsdp_hybrid_zero2_none_bucketing";
  hybrid["Sharding Size"] = 2;
  const auto tables = build_tables({run("eager", 1, 512, 100), hybrid}, {});
  EXPECT_EQ(tables[0].rows[0].index[7], "none");
  EXPECT_EQ(tables[0].rows[1].index[7], "2");
}

TEST(BuildTables, RunsThatWouldShareACellGetATieBreakingColumn) {
  json two_layers = run("eager", 1, 512, 50);
  two_layers["n_layer"] = 2;
  const auto tables = build_tables({run("eager", 1, 512, 100), two_layers}, {});
  ASSERT_EQ(tables[0].index_columns.size(), 9u);
  EXPECT_EQ(tables[0].index_columns.back(), "n_layer");
  ASSERT_EQ(tables[0].rows.size(), 2u);
  EXPECT_EQ(tables[0].rows[1].index.back(), "2");
  EXPECT_EQ(tables[0].rows[1].cells[0], json(50.0));
  // A plain repeat keeps the reference's pivot_table(aggfunc="first").
  const auto repeated = build_tables({run("eager", 1, 512, 100), run("eager", 1, 512, 120)}, {});
  EXPECT_EQ(repeated[0].index_columns.size(), 8u);
  ASSERT_EQ(repeated[0].rows.size(), 1u);
  EXPECT_EQ(repeated[0].rows[0].cells[0], json(100.0));
}

TEST(BuildTables, SweepOptionsTellApartRunsTheResultKeysDoNot) {
  // A sweep's deliberate out-of-memory row has the same index as a normal row: the option that
  // sets it apart joins the index, so the failed row is not hidden behind the first.
  json normal = run("eager", 1, 512, 100);
  normal["sweep_options"] = {{"seq-len", "512"}};
  json capped = run("eager", 1, 512, 0, "oom");
  capped["sweep_options"] = {{"seq-len", "512"}, {"cpu-memory-cap-mb", "40"}};
  const auto tables = build_tables({normal, capped}, {});
  ASSERT_EQ(tables[0].rows.size(), 2u);
  EXPECT_EQ(tables[0].index_columns.back(), "cpu-memory-cap-mb");
  EXPECT_EQ(tables[0].rows[0].index.back(), "none");
  EXPECT_EQ(tables[0].rows[1].index.back(), "40");
  EXPECT_EQ(tables[0].rows[1].cells[0], json("oom"));
}

TEST(BuildTables, ReferenceResultsWithoutStatusOrPerDeviceThroughput) {
  json reference = run("inductor", 4, 2048, 250);
  reference.erase("status");
  reference.erase("tokens_per_sec_per_device");
  const auto tables = build_tables({reference}, {});
  const auto& per_device = table(tables, "tokens_per_sec_per_device");
  EXPECT_DOUBLE_EQ(per_device.rows[0].cells[0]->get<double>(), reference["tokens_per_sec"].get<double>() / 4);
  EXPECT_EQ(table(tables, "status").rows[0].cells[0], json("ok"));
}

TEST(BuildTables, NoRuns) {
  const auto tables = build_tables({}, {});
  ASSERT_EQ(tables.size(), 7u);
  EXPECT_TRUE(tables[0].rows.empty());
  EXPECT_TRUE(tables[0].executors.empty());
}

TEST(Formats, NamesAndErrors) {
  EXPECT_EQ(format_from_string("print").name, "print");
  EXPECT_EQ(format_from_string("csv").name, "csv");
  EXPECT_EQ(format_from_string("json").name, "json");
  EXPECT_EQ(format_from_string("markdown").name, "markdown");
  EXPECT_EQ(format_from_string("md").name, "markdown");
  EXPECT_EQ(format_from_string("html").name, "html");
  EXPECT_EQ(format_from_string("html").file, FileUse::optional);
  EXPECT_EQ(format_from_string("csv").file, FileUse::never);
  // Every plug-in's factory makes a reporter (xlsx only where it was built).
  std::ostringstream sink;
  for (const auto& plugin : reporter_plugins()) {
    if (plugin.available()) {
      EXPECT_NE(plugin.make(ReportTarget{sink, {}, {}}), nullptr) << plugin.name;
    }
  }
  if (xlsx_available()) {
    EXPECT_EQ(format_from_string("xlsx").name, "xlsx");
  } else {
    EXPECT_THROW(format_from_string("xlsx"), std::invalid_argument);
  }
  try {
    format_from_string("pdf");
    FAIL() << "pdf accepted";
  } catch (const std::invalid_argument& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("pdf"), std::string::npos);
    EXPECT_NE(what.find("print, csv, json, markdown"), std::string::npos);
  }
  // The option it came from, in the one shape of a refused choice, with the format meant.
  try {
    format_from_string("markdwn", "BENCHMARK_OUT_FORMAT");
    FAIL() << "markdwn accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()).rfind("BENCHMARK_OUT_FORMAT 'markdwn' is not valid (did you mean 'markdown'?); "
                                          "valid: print, csv, json, markdown, md",
                                          0),
              0u)
        << e.what();
  }
}

TEST(ResultColumns, DocumentedKeysOnceEachAndTabularOrderHoldsThemAll) {
  const auto& columns = tokbench::results::result_columns();
  std::set<std::string> keys;
  for (const auto& c : columns) {
    EXPECT_TRUE(keys.insert(c.key).second) << c.key;
    EXPECT_FALSE(c.label.empty()) << c.key;
    EXPECT_EQ(tokbench::results::find_column(c.key), &c) << c.key;
  }
  const auto& tabular = tokbench::results::tabular_columns();
  ASSERT_EQ(tabular.size(), columns.size());
  EXPECT_EQ(tabular.front().key, "sweep_config_id");
  std::set<std::string> tabular_keys;
  for (const auto& c : tabular) tabular_keys.insert(c.key);
  EXPECT_EQ(tabular_keys, keys);
  EXPECT_EQ(tokbench::results::find_column("no_such_key"), nullptr);
  for (const char* key : {"model_name", "Num GPUS", "Seq Len", "Micro BS", "Global BS", "GA", "Distributed Mode",
                          "Sharding Size", "compiler", "status", "message", "average_iter_time", "tokens_per_sec",
                          "tokens_per_sec_per_device", "memory_used_GB", "model_TFLOP_per_s_per_device", "mfu"})
    EXPECT_TRUE(keys.count(key)) << key;
}

TEST(Csv, HeaderOrderQuotingAndNestedValues) {
  json a = run("eager", 1, 512, 100);
  a["message"] = "said \"hi\", then\nleft";
  a["iterations"] = json::array({{{"index", 0}, {"time_ms", 1.5}}});
  json b = run("fused", 1, 512, 0, "invalid");
  b["zz_extra"] = true;
  std::ostringstream out;
  write_report(format_from_string("csv"), json::object(), {a, b}, {}, out, {});
  const std::string csv = out.str();
  const std::string header = csv.substr(0, csv.find("\r\n"));
  // results::tabular_columns() order first (model_name before status before average_iter_time) ...
  EXPECT_LT(header.find("model_name"), header.find("status"));
  EXPECT_LT(header.find("status"), header.find("average_iter_time"));
  // ... then the other keys as they first appear (the runs are nlohmann::json: keys sorted).
  EXPECT_LT(header.find("iterations"), header.find("zz_extra"));
  EXPECT_NE(csv.find("\"said \"\"hi\"\", then\nleft\""), std::string::npos);
  EXPECT_NE(csv.find("\"[{\"\"index\"\":0,\"\"time_ms\"\":1.5}]\""), std::string::npos);
}

// A text a spreadsheet would evaluate is shown, never run: CSV prefixes it with '; numbers,
// negative ones included, stay numbers.
TEST(Csv, TextThatLooksLikeAFormulaIsNeutralised) {
  json a = run("eager", 1, 512, 100);
  a["model_name"] = "=HYPERLINK(\"http://x\")";
  a["message"] = "@SUM(1)";
  a["zz_negative"] = -1.5;
  a["zz_plus"] = "+1";
  std::ostringstream out;
  write_report(format_from_string("csv"), json::object(), {a}, {}, out, {});
  const std::string csv = out.str();
  EXPECT_NE(csv.find("\r\n\"'=HYPERLINK(\"\"http://x\"\")\","), std::string::npos) << csv;
  EXPECT_NE(csv.find(",'@SUM(1),"), std::string::npos) << csv;
  EXPECT_NE(csv.find(",'+1"), std::string::npos) << csv;
  EXPECT_NE(csv.find(",-1.5,"), std::string::npos) << csv;
  EXPECT_EQ(csv.find("\"=HYPERLINK"), std::string::npos) << csv;
}

TEST(Json, ContextAndRuns) {
  std::ostringstream out;
  write_report(format_from_string("json"), json{{"matrix", "m"}}, {run("eager", 1, 512, 100)}, {}, out, {});
  const json doc = json::parse(out.str());
  EXPECT_EQ(doc["context"]["matrix"], "m");
  ASSERT_EQ(doc["runs"].size(), 1u);
  EXPECT_EQ(doc["runs"][0]["compiler"], "eager");
}

TEST(Markdown, HeadingsPipeTablesAndStatus) {
  std::ostringstream out;
  json odd = run("eager", 1, 2048, 0, "oom");
  odd["model_name"] = "a|b";
  json slash = run("eager", 1, 4096, 0, "oom");
  slash["model_name"] = "c\\|d\\";  // a backslash must not undo the pipe's escape
  write_report(format_from_string("markdown"), json::object(), {run("eager", 1, 512, 100), odd, slash}, {}, out, {});
  const std::string md = out.str();
  EXPECT_EQ(md.rfind("### AVERAGE ITERATION TIME (ms)\n\n| model_name | Num GPUS |", 0), 0u) << md;
  EXPECT_NE(md.find("| pythia-14m | 1 | 512 | 1 | 1 | 1 | none | none | 100.00 |"), std::string::npos) << md;
  EXPECT_NE(md.find("| a\\|b | 1 | 2048 | 1 | 1 | 1 | none | none | oom |"), std::string::npos) << md;
  EXPECT_NE(md.find("| c\\\\\\|d\\\\ | 1 | 4096 |"), std::string::npos) << md;
  EXPECT_NE(md.find("\n### STATUS\n"), std::string::npos);
}

// One rule for which columns are numbers, from the column table, in every format that aligns:
// Sharding Size (null in every row here: "none") is a column of numbers; model_name holding a
// number-like name stays text.
TEST(ColumnKinds, MarkdownAndHtmlAlignByTheColumnTableNotByTheValues) {
  EXPECT_TRUE(results::is_numeric_column("Sharding Size"));
  EXPECT_TRUE(results::is_numeric_column("Seq Len"));
  EXPECT_FALSE(results::is_numeric_column("model_name"));
  EXPECT_FALSE(results::is_numeric_column("dtype"));
  EXPECT_FALSE(results::is_numeric_column("no such key"));
  json numbered = run("eager", 1, 512, 100);
  numbered["model_name"] = "123";
  std::ostringstream md;
  write_report(format_from_string("markdown"), json::object(), {numbered}, {}, md, {});
  // model_name, Num GPUS, Seq Len, Micro BS, Global BS, GA, Distributed Mode, Sharding Size, eager.
  EXPECT_NE(md.str().find("\n| --- | ---: | ---: | ---: | ---: | ---: | --- | ---: | ---: |\n"), std::string::npos)
      << md.str();
  std::ostringstream html;
  write_report(format_from_string("html"), json::object(), {numbered}, {}, html, {});
  EXPECT_NE(html.str().find("<th>model_name</th><th class=\"right\">Num GPUS</th>"), std::string::npos);
  EXPECT_NE(html.str().find("<th>Distributed Mode</th><th class=\"right\">Sharding Size</th>"), std::string::npos);
}

TEST(Html, EscapesAndNeedsNothingExternal) {
  json odd = run("eager", 1, 2048, 0, "oom");
  odd["model_name"] = "<script>alert('x')</script>";
  odd["message"] = "a & b < c";
  std::ostringstream out;
  write_report(format_from_string("html"), json{{"note", "\"quoted\""}}, {run("eager", 1, 512, 100), odd}, {}, out, {});
  const std::string html = out.str();
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_NE(html.find("&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;"), std::string::npos);
  EXPECT_NE(html.find("a &amp; b &lt; c"), std::string::npos);
  EXPECT_NE(html.find("&quot;quoted&quot;"), std::string::npos);
  EXPECT_EQ(html.find("http://"), std::string::npos);
  EXPECT_EQ(html.find("https://"), std::string::npos);
  EXPECT_EQ(html.find("<link"), std::string::npos);
  EXPECT_NE(html.find("<svg class=\"chart\" id=\"chart-throughput\""), std::string::npos);
  EXPECT_NE(html.find("<svg class=\"chart\" id=\"chart-scaling\""), std::string::npos);
}

}  // namespace
}  // namespace tokbench::results
