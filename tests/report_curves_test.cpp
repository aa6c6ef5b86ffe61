// Curves per step in `harness report` (issue 18, "loss curves as a plot in the HTML
// report"): the extra.<name>_curve convention, one chart per configuration with one line
// per variant (ours and PyTorch's from a second report alike, with --merge), the stride,
// the markdown tables, and reports without curves rendering as before.
//
// Fixtures: tests/data/reports/curves/ (trimmed from the H200 issue-18 reports by
// make_fixtures.py; ours_bf16's curve there is re-strided to 2 on purpose).
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <regex>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "harness/error.hpp"
#include "render/report_curves.hpp"
#include "render/report_history.hpp"
#include "render/report_render.hpp"
#include "test_support.hpp"

namespace harness {
namespace {

using nlohmann::json;

const std::string kCurves = HARNESS_SOURCE_DIR "/tests/data/reports/curves/";
const std::string kReports = HARNESS_SOURCE_DIR "/tests/data/reports/";

json load_json(const std::string& path) { return json::parse(test::read_file(path)); }
Report load(const std::string& path) { return decode_report(load_json(path), path); }
Report ours() { return load(kCurves + "transformer.json"); }
Report merged() { return merge_reports({ours(), load(kCurves + "pytorch.json")}); }

using test::count;

// The <svg> element with this id.
std::string svg_of(const std::string& html, const std::string& id) {
  const std::size_t at = html.find("id=\"" + id + "\"");
  if (at == std::string::npos) return "";
  const std::size_t begin = html.rfind("<svg ", at), end = html.find("</svg>", at);
  return html.substr(begin, end + 6 - begin);
}

// The polylines without markers (one per curve) of an svg: label -> x coordinates.
std::map<std::string, std::vector<double>> curve_lines(const std::string& svg) {
  std::map<std::string, std::vector<double>> out;
  const std::regex line(R"re(<polyline points="([^"]*)"[^>]*><title>([^<]*)</title></polyline>)re");
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), line); it != std::sregex_iterator(); ++it) {
    std::vector<double>& xs = out[(*it)[2].str()];
    const std::string pts = (*it)[1].str();
    const std::regex pt(R"(([-0-9.]+),[-0-9.]+)");
    for (auto p = std::sregex_iterator(pts.begin(), pts.end(), pt); p != std::sregex_iterator(); ++p)
      xs.push_back(std::stod((*p)[1].str()));
  }
  return out;
}

const Result& result_of(const Report& rep, const std::string& variant, const std::string& part) {
  for (const auto& r : rep.results)
    if (r.variant == variant && r.name.find(part) != std::string::npos) return r;
  throw std::runtime_error("no " + variant);
}

TEST(Curves, ConventionNameArrayAndStride) {
  Result r;
  r.extra = json::parse(R"({"loss_curve": [3, 2.5, null, 2], "loss_curve_stride": 4,
                            "grad_norm_curve": [1, 0.5], "grad_norm_curve_stride": 1.5,
                            "curve": [1, 2], "names_curve": ["a", "b"], "empty_curve": [],
                            "nulls_curve": [null], "loss_first": 3, "mixed_curve": [1, "x"]})");
  const auto curves = curves_of(r);
  ASSERT_EQ(curves.size(), 2u);  // grad_norm, loss (alphabetical); the rest are not curves
  EXPECT_EQ(curves[0].name, "grad_norm");
  EXPECT_EQ(curves[0].stride, 1u);  // not a positive integer: every step
  EXPECT_EQ(curves[1].name, "loss");
  EXPECT_EQ(curves[1].stride, 4u);
  ASSERT_EQ(curves[1].values.size(), 4u);
  EXPECT_TRUE(std::isnan(curves[1].values[2]));
  EXPECT_EQ(curves[1].last_step(), 12);
  r.extra = {{"x_curve", {1}}, {"x_curve_stride", 1e15}};  // absurd stride: every step
  EXPECT_EQ(curves_of(r).at(0).stride, 1u);
  r.extra = nullptr;
  EXPECT_TRUE(curves_of(r).empty());
  r.extra = json::array({1, 2});
  EXPECT_TRUE(curves_of(r).empty());
}

TEST(Curves, AnyProblemAnyCurveName) {
  // Nothing here knows "transformer" or "loss": a gemm result with a residual per
  // iteration gets its chart, on a log axis when the values span decades.
  json j = load_json(kReports + "gemm_base.json");
  j["results"][0]["extra"] = {{"residual_curve", {1.0, 0.1, 0.01, 0.001}}};
  j["results"][1]["extra"] = {{"residual_curve", {1.0, 0.05, 0.002}}, {"residual_curve_stride", 3}};
  const Report rep = decode_report(j, "gemm.json");
  const std::string html = render_report_html(rep);
  const std::string chart = svg_of(html, "curve-0");
  EXPECT_NE(chart.find("gemm: residual against step"), std::string::npos);
  EXPECT_NE(chart.find("step (a value every 3 steps)"), std::string::npos);
  EXPECT_NE(chart.find(">residual</text>"), std::string::npos);
  EXPECT_NE(chart.find(">0.001</text>"), std::string::npos);  // a decade tick of the log axis
  EXPECT_EQ(curve_lines(chart).size(), 2u);
  EXPECT_EQ(svg_of(html, "curve-1"), "");
  const std::string md = render_report_markdown(rep);
  EXPECT_NE(md.find("**residual** per step:"), std::string::npos);  // one configuration: no caption
  // Steps 0, 2, 3, 5 of the longest (tiled: 0..6): the recorded value at or before each.
  EXPECT_NE(md.find("| naive | 1.000 | 0.010 | 0.001 | - | 0.001 | 3 | 0.001 |"), std::string::npos) << md;
  EXPECT_NE(md.find("| tiled | 1.000 | 1.000 | 0.050 | 0.050 | 0.002 | 6 | 0.002 |"), std::string::npos) << md;
}

TEST(Curves, LongSeriesAreThinnedKeepingTheLastValue) {
  json j = load_json(kReports + "gemm_base.json");
  json curve = json::array();
  for (int i = 0; i < 10001; ++i) curve.push_back(1.0 + i % 7);
  j["results"][0]["extra"] = {{"loss_curve", curve}};
  const Report rep = decode_report(j, "long.json");
  const auto lines = curve_lines(svg_of(render_report_html(rep), "curve-0"));
  ASSERT_EQ(lines.size(), 1u);
  const auto& xs = lines.begin()->second;
  // Every 6th of 10001 values (steps 0, 6, ..., 9996: 1667), then the last, step 10000.
  EXPECT_EQ(xs.size(), 1667u + 1u);
  EXPECT_NEAR((xs.back() - xs.front()) / (xs[xs.size() - 2] - xs.front()), 10000.0 / 9996.0, 3e-4);
  EXPECT_GT(xs.back(), xs[xs.size() - 2]);
}

TEST(Curves, GroupsByConfigurationFromTheNameWithoutTheVariant) {
  const Report rep = merged();
  const auto groups = curve_groups(rep.results);
  // Seed graph=false (ours and PyTorch's), seed graph=true; the failed result has none.
  ASSERT_EQ(groups.size(), 2u);
  EXPECT_EQ(groups[0].config, "graph=false");
  EXPECT_EQ(groups[1].config, "graph=true");
  std::vector<std::string> labels;
  for (const auto& m : groups[0].members) labels.push_back(m.label);
  EXPECT_EQ(labels, (std::vector<std::string>{"cublas_flash", "ours_bf16", "pytorch_eager", "pytorch_bf16"}));
  // PyTorch's params lack graph/world_size/...: graph varies on ours' side, so PyTorch's
  // is read from its name; world_size has one value, so the merge leaves it out of the
  // pairing (said once on the page: "Not paired on", tests/report_merge_test.cpp).
  EXPECT_EQ(groups[0].fixed.find("world_size"), std::string::npos);
  EXPECT_NE(groups[0].fixed.find("batch=100"), std::string::npos);
  // A variant twice in a configuration (the same report merged with itself) is told apart.
  const auto twice = curve_groups(merge_reports({ours(), ours()}).results);
  ASSERT_EQ(twice[0].members.size(), 4u);
  EXPECT_EQ(twice[0].members[2].label, "cublas_flash (2)");
}

TEST(Curves, HtmlChartPerConfigurationOneLinePerVariant) {
  const std::string html = render_report_html(merged());
  EXPECT_NE(html.find("<h2 id=\"curves\">"), std::string::npos);
  EXPECT_NE(html.find("<a href=\"#curves\">"), std::string::npos);
  EXPECT_EQ(count(html, "svg\" id=\"curve-"), 2u);
  EXPECT_EQ(svg_of(html, "curve-2"), "");
  const std::string seed = svg_of(html, "curve-0");
  EXPECT_NE(seed.find("train_transformer: loss against step"), std::string::npos);
  EXPECT_NE(seed.find("graph=false; one line per variant"), std::string::npos);
  EXPECT_NE(seed.find("step (a value every 2 steps)"), std::string::npos);  // x axis label
  EXPECT_NE(seed.find(">loss</text>"), std::string::npos);                  // y axis label
  const auto lines = curve_lines(seed);
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(count(seed, "<polyline points="), 4u);  // one path per series, nothing else
  EXPECT_EQ(count(seed, "<circle "), 0u);           // no markers on long series
  for (const char* v : {"cublas_flash", "ours_bf16", "pytorch_eager", "pytorch_bf16"}) {
    EXPECT_NE(seed.find(fmt::format(">{}</text>", v)), std::string::npos) << v;  // legend
    ASSERT_TRUE(lines.count(v)) << v;
    EXPECT_EQ(lines.at(v).size(), 40u) << v;  // every value of the curve
  }
  const auto& x1 = lines.at("cublas_flash");
  const auto& x2 = lines.at("ours_bf16");
  // Stride honoured: both start at step 0; 40 values every 2 steps reach step 78, twice as
  // far as 40 values every step (step 39).
  EXPECT_DOUBLE_EQ(x1.front(), x2.front());
  EXPECT_NEAR((x2.back() - x2.front()) / (x1.back() - x1.front()), 78.0 / 39.0, 0.01);
  // One line in the graph=true chart; the table under each chart names every variant.
  EXPECT_EQ(curve_lines(svg_of(html, "curve-1")).size(), 1u);
  EXPECT_EQ(count(html, "<table class=\"curve\">"), 2u);
  // A variant keeps its color: the line and the throughput chart's points agree.
  const std::regex stroke(R"re(stroke="(#[0-9a-f]{6})" stroke-width="1.6"[^>]*><title>pytorch_eager</title>)re");
  std::smatch m;
  ASSERT_TRUE(std::regex_search(seed, m, stroke));
  EXPECT_NE(html.find(fmt::format("fill=\"{}\" stroke=\"#fff\"", m[1].str())), std::string::npos);
}

TEST(Curves, HistoryPageDrawsTheCurvesOfEveryRun) {
  // Two reports without --merge are a history; its page has the curves too. A variant in
  // both runs gets a line per run, one in a single run keeps its name.
  Report again = ours();
  again.results.erase(again.results.begin() + 1);  // ours_bf16 only in the first run
  const std::string html = render_history_html({ours(), again});
  const auto lines = curve_lines(svg_of(html, "curve-0"));
  std::vector<std::string> labels;
  for (const auto& [label, xs] : lines) labels.push_back(label);
  EXPECT_EQ(labels, (std::vector<std::string>{"cublas_flash (run 1)", "cublas_flash (run 2)", "ours_bf16"}));
  EXPECT_EQ(curve_lines(svg_of(render_history_html({ours(), load(kCurves + "pytorch.json")}), "curve-0")).size(), 4u);
  // A history of reports without curves has no such section.
  const Report gemm = load(kReports + "gemm_base.json");
  EXPECT_EQ(render_history_html({gemm, gemm}).find("id=\"curves\""), std::string::npos);
}

TEST(Curves, MarkdownTablesHoldTheValues) {
  const Report rep = merged();
  const std::string md = render_report_markdown(rep);
  EXPECT_NE(md.find("**loss** per step, graph=false:"), std::string::npos);
  EXPECT_NE(md.find("**loss** per step, graph=true:"), std::string::npos);
  // Steps from the longest curve of the configuration (ours_bf16: 0..78).
  EXPECT_NE(md.find("| variant | step 0 | step 20 | step 39 | step 59 | last | last step | mean of last 10% |"),
            std::string::npos);
  for (const auto& [variant, part] : std::vector<std::pair<std::string, std::string>>{
           {"cublas_flash", "graph:false"}, {"ours_bf16", "graph:false"}, {"pytorch_eager", "seq_len:13"}}) {
    const json& c = result_of(rep, variant, part).extra["loss_curve"];
    const std::size_t stride = result_of(rep, variant, part).extra["loss_curve_stride"].get<std::size_t>();
    const std::size_t n = c.size(), tail = (n + 9) / 10;
    double sum = 0;
    for (std::size_t i = n - tail; i < n; ++i) sum += c[i].get<double>();
    // step 20 is value 20 / stride; past its end a curve shows "-".
    // Losses between 0.01 and 1e4 show three decimals.
    const std::string at59 = 59 / stride < n ? fmt::format("{:.3f}", c[59 / stride].get<double>()) : "-";
    const std::string row =
        fmt::format("| {} | {:.3f} | {:.3f} | {:.3f} | {} | {:.3f} | {} | {:.3f} |", variant, c[0].get<double>(),
                    c[20 / stride].get<double>(), c[39 / stride].get<double>(), at59, c[n - 1].get<double>(),
                    (n - 1) * stride, sum / static_cast<double>(tail));
    EXPECT_NE(md.find(row), std::string::npos) << row << "\n" << md;
  }
  EXPECT_EQ(count(md, "| ours_bf16 |"), 2u + 1u);  // two results, one curve
}

TEST(Curves, ReportsWithoutCurvesRenderAsBefore) {
  const Report gemm = load(kReports + "gemm_base.json");
  const std::string html = render_report_html(gemm);
  EXPECT_EQ(html.find("id=\"curves\""), std::string::npos);
  EXPECT_EQ(html.find("#curves"), std::string::npos);
  EXPECT_EQ(render_report_markdown(gemm).find("per step"), std::string::npos);
  // The golden markdown of ReportRender.MarkdownMatchesTheGoldenFile holds the rest.
  EXPECT_EQ(render_report_markdown(gemm), test::read_file(HARNESS_SOURCE_DIR "/tests/data/golden/gemm_base.md"));
  // A result whose extra is not made of curves changes nothing either.
  json j = load_json(kReports + "gemm_base.json");
  j["results"][0]["extra"] = {{"loss_curve", "not an array"}, {"steps", 3}};
  const Report odd = decode_report(j, "odd.json");
  EXPECT_EQ(render_report_html(odd).find("id=\"curves\""), std::string::npos);
  EXPECT_EQ(render_report_markdown(odd), render_report_markdown(gemm));
}

TEST(Curves, MergedReportNamesItsSources) {
  const Report rep = merged();
  EXPECT_EQ(rep.results.size(), 6u);
  EXPECT_EQ(rep.merged_from.size(), 2u);
  EXPECT_EQ(rep.suite.name.value_or(""), "transformer + pytorch-suites/transformer.yaml");
  const std::string md = render_report_markdown(rep);
  EXPECT_NE(md.find("| Reports | 2 merged: "), std::string::npos);
  EXPECT_NE(md.find("pytorch.json"), std::string::npos);
  EXPECT_THROW(merge_reports({}), InputError);
}

TEST(Curves, CommandLineMergeAndHelp) {
  const std::string exe = HARNESS_EXE;
  const std::string a = kCurves + "transformer.json", b = kCurves + "pytorch.json";
  auto r = test::run_command(exe + " validate " + a + " " + b);  // the fixtures are real reports
  EXPECT_EQ(r.exit_code, 0) << r.output;
  r = test::run_command(exe + " report " + a + " " + b + " --merge --format md");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("**loss** per step, graph=false:"), std::string::npos);
  const double first = load_json(b)["results"][1]["extra"]["loss_curve"][0].get<double>();
  EXPECT_NE(r.output.find(fmt::format("| pytorch_bf16 | {:.3f} |", first)), std::string::npos) << r.output;
  const std::string out = test::temp_path("curves.html");
  r = test::run_command(exe + " report " + a + " " + b + " --merge --out " + out);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(count(test::read_file(out), "svg\" id=\"curve-"), 2u);
  std::remove(out.c_str());
  // Without --merge two reports are a history, which has no markdown: the error says how.
  r = test::run_command(exe + " report " + a + " " + b + " --format md");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("--merge renders them as one report"), std::string::npos) << r.output;
  r = test::run_command(exe + " report --help");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.output.find("--merge"), std::string::npos);
  EXPECT_NE(r.output.find("NAME_curve"), std::string::npos);
  EXPECT_NE(r.output.find("mean of the last 10%"), std::string::npos);
}

}  // namespace
}  // namespace harness
