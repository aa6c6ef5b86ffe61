// harness report: the markdown golden file, CSV that parses, HTML with its charts.
//
// To refresh the golden file after an intended change of the markdown:
//   HARNESS_UPDATE_GOLDEN=1 ./build/<preset>/tests/compare_test --gtest_filter='ReportRender.*'
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <regex>

#include <nlohmann/json.hpp>

#include "harness/error.hpp"
#include "render/report_fields.hpp"
#include "render/report_render.hpp"
#include "render/report_svg.hpp"
#include "test_support.hpp"

namespace harness {
namespace {

using nlohmann::json;

const std::string kReports = HARNESS_SOURCE_DIR "/tests/data/reports/";
const std::string kGolden = HARNESS_SOURCE_DIR "/tests/data/golden/";

json load_json(const std::string& name) { return json::parse(test::read_file(kReports + name)); }
Report load(const std::string& name) { return decode_report(load_json(name), name); }
Report model(const json& report) { return decode_report(report, "test.json"); }

using test::count;

void check_golden(const std::string& name, const std::string& actual) {
  const std::string path = kGolden + name;
  if (const char* update = std::getenv("HARNESS_UPDATE_GOLDEN"); update && std::string(update) == "1") {
    std::ofstream(path, std::ios::binary) << actual;
    GTEST_SKIP() << "wrote " << path;
  }
  const std::string expected = test::read_file(path);
  ASSERT_FALSE(expected.empty()) << path << " is missing; HARNESS_UPDATE_GOLDEN=1 writes it";
  EXPECT_EQ(actual, expected) << "differs from " << path << "; if intended, HARNESS_UPDATE_GOLDEN=1 refreshes it";
}

TEST(ReportRender, MarkdownMatchesTheGoldenFile) {
  check_golden("gemm_base.md", render_report(load("gemm_base.json"), "md"));
}

TEST(ReportRender, MarkdownTablesAreWellFormed) {
  const std::string md = render_report_markdown(load("gemm_base.json"));
  EXPECT_NE(md.find("# harness report: gemm+attention"), std::string::npos);
  EXPECT_NE(md.find("| GPU | NVIDIA H100 80GB HBM3 (132 SMs, cc 9.0"), std::string::npos);
  EXPECT_NE(md.find("**43 results: 34 passed, 0 failed, 9 skipped, 0 errors**"), std::string::npos);
  EXPECT_NE(md.find("Fixed parameters: alpha=1, beta=0"), std::string::npos);
  EXPECT_NE(md.find("| variant | M | N | K | status | median |"), std::string::npos);
  // Every table row has as many cells as its header.
  std::istringstream in(md);
  std::string line;
  std::size_t columns = 0;
  bool in_table = false;
  while (std::getline(in, line)) {
    if (line.rfind("|", 0) != 0) {
      in_table = false;
      continue;
    }
    std::size_t cells = 0;
    for (std::size_t i = 0; i < line.size(); ++i)
      if (line[i] == '|' && (i == 0 || line[i - 1] != '\\')) ++cells;
    if (!in_table) columns = cells;
    in_table = true;
    EXPECT_EQ(cells, columns) << line;
  }
}

// RFC 4180: quoted fields may hold commas, doubled quotes and line breaks.
std::vector<std::vector<std::string>> parse_csv(const std::string& text) {
  std::vector<std::vector<std::string>> rows(1);
  std::string field;
  bool quoted = false, was_quoted = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
        field += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        field += c;
      }
    } else if (c == '"') {
      if (!field.empty()) throw std::runtime_error("quote inside an unquoted field");
      quoted = was_quoted = true;
    } else if (c == ',') {
      rows.back().push_back(field);
      field.clear();
      was_quoted = false;
    } else if (c == '\n') {
      rows.back().push_back(field);
      field.clear();
      was_quoted = false;
      rows.emplace_back();
    } else {
      if (was_quoted) throw std::runtime_error("text after a closing quote");
      field += c;
    }
  }
  if (quoted) throw std::runtime_error("unterminated quote");
  if (!field.empty() || !rows.back().empty()) rows.back().push_back(field);
  if (rows.back().empty()) rows.pop_back();
  return rows;
}

TEST(ReportRender, CsvParses) {
  json report = load_json("gemm_base.json");
  // A reason with a comma, a quote and a line break must survive.
  report["results"][4]["reason"] = "odd, \"quoted\"\nreason";
  const auto rows = parse_csv(render_report(model(report), "csv"));
  ASSERT_EQ(rows.size(), report["results"].size() + 1);
  const auto& head = rows[0];
  for (const auto& row : rows) ASSERT_EQ(row.size(), head.size());
  auto col = [&](const std::string& name) {
    const auto it = std::find(head.begin(), head.end(), name);
    EXPECT_NE(it, head.end()) << name;
    return static_cast<std::size_t>(it - head.begin());
  };
  EXPECT_EQ(rows[5][col("reason")], "odd, \"quoted\"\nreason");
  for (std::size_t i = 0; i < report["results"].size(); ++i) {
    const json& r = report["results"][i];
    const auto& row = rows[i + 1];
    EXPECT_EQ(row[col("name")], r["name"].get<std::string>());
    EXPECT_EQ(row[col("status")], r["status"].get<std::string>());
    if (r["problem"] == "gemm") {
      EXPECT_EQ(std::stoll(row[col("param.M")]), r["params"]["M"].get<long long>());
    }
    if (r["stats"].is_object()) {
      EXPECT_DOUBLE_EQ(std::stod(row[col("median_s")]), r["stats"]["median_s"].get<double>());
      EXPECT_DOUBLE_EQ(std::stod(row[col("gflops")]), r["rates"]["gflops"].get<double>());
    } else {
      EXPECT_EQ(row[col("median_s")], "");
    }
  }
}

// Throughput charts: TFLOP/s once a rate reaches 1000 GFLOP/s, GFLOP/s below (issue 34:
// "664679 GFLOP/s" read badly; "0.05 TFLOP/s" would too).
TEST(ReportRender, ThroughputChartUnitFollowsTheRates) {
  Report rep = load("gemm_base.json");
  std::erase_if(rep.results, [](const Result& r) { return r.problem != "gemm"; });
  for (auto& r : rep.results) r.gflops = r.gflops > 0 ? 900.0 * r.gflops / (r.gflops + 1) : r.gflops;  // all < 900
  std::string html = render_report(rep, "html");
  EXPECT_NE(html.find("gemm: GFLOP/s against M = N = K"), std::string::npos);
  EXPECT_EQ(html.find("gemm: TFLOP/s against"), std::string::npos);
  rep.results.front().gflops = 1500;  // one rate past 1000: the chart in TFLOP/s
  html = render_report(rep, "html");
  EXPECT_NE(html.find("gemm: TFLOP/s against M = N = K"), std::string::npos);
}

TEST(ReportRender, HtmlHasTheChartsAndNothingExternal) {
  const std::string html = render_report(load("gemm_base.json"), "html");
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  // Throughput per problem (gemm, attention), the roofline, the memory chart, and the
  // speed relative to cublas for gemm's one case (attention has no vendor variant).
  EXPECT_EQ(count(html, "<svg "), 5u);
  EXPECT_EQ(count(html, "class=\"bars\""), 1u);
  EXPECT_NE(html.find("id=\"throughput-0\""), std::string::npos);
  // Rates from 1000 GFLOP/s on in TFLOP/s (issue 34).
  EXPECT_NE(html.find("gemm: TFLOP/s against M = N = K"), std::string::npos);
  EXPECT_NE(html.find("attention: TFLOP/s against seq_len"), std::string::npos);
  EXPECT_NE(html.find("id=\"roofline\""), std::string::npos);
  EXPECT_NE(html.find("arithmetic intensity (FLOP/byte)"), std::string::npos);
  EXPECT_NE(html.find("roof (device peaks)"), std::string::npos);
  EXPECT_NE(html.find("3000 GB/s DRAM, 60.0 TFLOP/s FP32; each point against the roof of its dtype"), std::string::npos);
  EXPECT_NE(html.find("<th>% of peak</th>"), std::string::npos);
  EXPECT_NE(html.find(">34% FP32<"), std::string::npos);  // flash at 32768: 20341 of 60000 GFLOP/s
  EXPECT_NE(html.find("attention: extra device memory against seq_len"), std::string::npos);
  EXPECT_NE(html.find("extra device memory (bytes)"), std::string::npos);
  EXPECT_NE(html.find("out of memory (skipped)"), std::string::npos);
  EXPECT_EQ(count(html, "class=\"edge-marker\""), 1u);  // naive at seq_len 32768
  // Legends name the variants; every point has a tooltip.
  EXPECT_NE(html.find(">coarsened</text>"), std::string::npos);
  // 34 timed results in the throughput charts and the roofline; 11 in the memory chart.
  EXPECT_EQ(count(html, "</title></circle>"), 34u + 34u + 11u);
  // Self-contained: no scripts, no external resources.
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find(" src="), std::string::npos);
  EXPECT_EQ(html.find("href=\"http"), std::string::npos);
  EXPECT_EQ(html.find("url(http"), std::string::npos);
  EXPECT_NE(html.find("Content-Security-Policy"), std::string::npos);
  // Every result appears in the tables.
  EXPECT_EQ(count(html, "<tr class=\""), load("gemm_base.json").results.size());
}

TEST(ReportRender, RooflineFromBestMeasuredWithoutDevicePeaks) {
  json report = load_json("gemm_base.json");
  report["environment"].erase("device_peaks");
  const std::string html = render_report_html(model(report));
  EXPECT_NE(html.find("roof (best measured)"), std::string::npos);
  EXPECT_NE(html.find("the report states no device peaks"), std::string::npos);
}

TEST(ReportRender, EachResultStandsAgainstTheRoofOfItsDtype) {
  // A bf16 result with a measured bf16 tensor-core roof: its "% of peak" is against that
  // roof, not FP32's (which it would exceed several times); an f32 one stays against FP32.
  json report = load_json("gemm_base.json");
  report["environment"]["device_peaks"]["tensor"] = {{"bf16", {{"gflops", 800000.0}, {"gflops_median", 790000.0}}}};
  json& r = report["results"][0];
  r["params"]["dtype"] = "bf16";
  r["rates"]["gflops"] = 400000.0;
  r["work"]["bytes"] = 1.0;  // compute-bound at any intensity
  r["rates"]["arithmetic_intensity"] = r["work"]["flops"];
  r["rates"]["gbytes_per_s"] = 400000.0 / r["work"]["flops"].get<double>();
  r["stats"]["median_s"] = r["work"]["flops"].get<double>() / 400000e9;
  const Report m = model(report);
  const auto share = fields::peak_share(m.results[0], m.environment.peaks);
  ASSERT_TRUE(share);
  EXPECT_EQ(share->bound, "compute");
  EXPECT_EQ(share->roof, "bf16 tensor");
  EXPECT_NEAR(share->pct, 50.0, 0.01);
  const std::string md = render_report_markdown(m);
  EXPECT_NE(md.find("| Device peaks | 3000 GB/s DRAM, 60.0 TFLOP/s FP32, 800.0 TFLOP/s bf16 tensor |"), std::string::npos);
  EXPECT_NE(md.find("| 50% bf16 tensor |"), std::string::npos);
  const std::string html = render_report_html(m);
  EXPECT_NE(html.find("roof bf16 tensor"), std::string::npos);
  EXPECT_NE(html.find("roof FP32"), std::string::npos);
  const std::string csv = render_report_csv(m);
  EXPECT_NE(csv.find(",pct_of_peak,bound,roof"), std::string::npos);
  EXPECT_NE(csv.find(",compute,bf16 tensor"), std::string::npos);
  // A CPU result has no roof.
  for (const auto& x : m.results)
    if (x.backend == "cpu") {
      EXPECT_FALSE(fields::peak_share(x, m.environment.peaks));
    }
}

TEST(ReportRender, SmallAndEmptyReports) {
  json report = load_json("gemm_base.json");
  // Only skipped results: no chart, a sentence instead, and nothing breaks.
  for (auto& r : report["results"]) {
    r["status"] = "skipped";
    r["stats"] = nullptr;
    r["rates"] = nullptr;
    r["samples_s"] = json::array();
    r["memory"]["workspace_peak_bytes"] = 0;
    r["reason"] = "no CUDA device";
  }
  const std::string html = render_report_html(model(report));
  EXPECT_EQ(count(html, "<svg "), 0u);
  EXPECT_NE(html.find("No timed result for <b>gemm</b>"), std::string::npos);
  EXPECT_NE(html.find("no memory chart"), std::string::npos);
  report["results"] = json::array();
  EXPECT_NE(render_report_html(model(report)).find("The report has no results"), std::string::npos);
  EXPECT_NE(render_report_markdown(model(report)).find("0 results"), std::string::npos);
  EXPECT_EQ(parse_csv(render_report_csv(model(report))).size(), 1u);
}

// Issue 34: sizes recorded at one shape (no size parameter varies) used to fall through to
// "No result used extra device memory" above a table of 4 MiB .. 2.94 GiB.
TEST(ReportRender, MemoryAtOneShapeIsNotCalledNoExtraMemory) {
  json report = load_json("gemm_base.json");
  json one_shape = json::array();
  for (const auto& r : report["results"])
    if (r["params"] == report["results"][0]["params"]) one_shape.push_back(r);
  ASSERT_GE(one_shape.size(), 2u);
  one_shape[0]["memory"]["workspace_peak_bytes"] = 4 * 1024 * 1024;
  one_shape[1]["memory"]["workspace_peak_bytes"] = 3157000000.0;  // 2.94 GiB
  report["results"] = one_shape;
  const std::string html = render_report_html(model(report));
  EXPECT_EQ(html.find("No result used extra device memory"), std::string::npos);
  EXPECT_NE(html.find("gemm: extra device memory from 4.0 MiB to 2.94 GiB across 2 result(s), but no size parameter "
                      "varies among them: no chart (the Results table has each value)."),
            std::string::npos)
      << html.substr(html.find("id=\"memory\""), 600);
}

TEST(ReportRender, TimeChartWhenThereIsNoWork) {
  json report = load_json("gemm_base.json");
  for (auto& r : report["results"]) r["work"] = {{"flops", 0}, {"bytes", 0}};
  const std::string html = render_report_html(model(report));
  EXPECT_NE(html.find("gemm: median time against M = N = K"), std::string::npos);
  EXPECT_NE(html.find("median time (ms)"), std::string::npos);
  EXPECT_NE(html.find("no roofline to draw"), std::string::npos);
}

TEST(ReportRender, RejectsGoogleBenchmarkJsonAndUnknownFormats) {
  EXPECT_THROW(render_report(load("gbench_base.json"), "md"), InputError);
  EXPECT_THROW(render_report(load("gemm_base.json"), "pdf"), InputError);
}

TEST(Svg, TickLabels) {
  using svg::TickStyle;
  EXPECT_EQ(svg::tick_label(0, TickStyle::decimal), "0");
  EXPECT_EQ(svg::tick_label(1000, TickStyle::decimal), "1000");
  EXPECT_EQ(svg::tick_label(10000, TickStyle::decimal), "10k");
  EXPECT_EQ(svg::tick_label(2.5e6, TickStyle::decimal), "2.5M");
  EXPECT_EQ(svg::tick_label(0.05, TickStyle::decimal), "0.05");
  EXPECT_EQ(svg::tick_label(4096, TickStyle::binary), "4096");
  EXPECT_EQ(svg::tick_label(1 << 20, TickStyle::binary), "2^20");
  EXPECT_EQ(svg::tick_label(256 * 1024, TickStyle::bytes), "256 KiB");
  EXPECT_EQ(svg::tick_label(4.0 * (1 << 30), TickStyle::bytes), "4 GiB");
  EXPECT_EQ(svg::escape("a<b & \"c\""), "a&lt;b &amp; &quot;c&quot;");
}

TEST(Svg, ChartHasTitleAxesLegendAndClippedData) {
  svg::Chart c;
  c.id = "t";
  c.title = "Title <1>";
  c.x.label = "n (elements)";
  c.y.label = "GB/s";
  c.x.log = true;
  c.series.push_back({"first", {{1, 1, "p1"}, {1024, 3, "p2"}, {-1, 2, "not on a log axis"}}, true, {}});
  c.refs.push_back({"roof", {{0.001, 5}, {1e9, 5}}, "#444444", false});
  const std::string s = svg::render(c);
  EXPECT_EQ(s.rfind("<svg ", 0), 0u);
  EXPECT_NE(s.find("<title>Title &lt;1&gt;</title>"), std::string::npos);
  EXPECT_NE(s.find(">n (elements)</text>"), std::string::npos);
  EXPECT_NE(s.find(">GB/s</text>"), std::string::npos);
  EXPECT_NE(s.find(">first</text>"), std::string::npos);
  EXPECT_NE(s.find(">roof</text>"), std::string::npos);
  EXPECT_EQ(count(s, "<circle cx="), 2u + 1u);  // two points and the legend's marker
  EXPECT_EQ(s.find("not on a log axis"), std::string::npos);
  EXPECT_NE(s.find("clip-path=\"url(#t-clip)\""), std::string::npos);
}

}  // namespace
}  // namespace harness
