// Ours next to PyTorch on one page (issue 34, item 2): `harness report ours.json
// pt-default.json pt-reduce-overhead.json --merge`. The results pair by the parameters
// both sides have (PyTorch's lack graph/world_size/bucket_mb/...), the two PyTorch
// results of one variant name are told apart by extra.compile_mode, the speed and
// throughput charts hold PyTorch's, the throughput chart's x axis is a size parameter
// (was clip_norm: 1.0 and 1 counted as two values), and a training table shows ms/step,
// tokens/s, MFU and the forward / backward / optimizer split side by side.
//
// Fixtures: tests/data/reports/merged/ (trimmed from the H200 reports of 2026-11-26 by
// make_fixtures.py; pt-default.json is derived, not measured).
#include <gtest/gtest.h>

#include <algorithm>

#include <nlohmann/json.hpp>

#include "render/report_render.hpp"
#include "report/merge_align.hpp"
#include "report/report_model.hpp"
#include "test_support.hpp"

namespace harness {
namespace {

const std::string kDir = HARNESS_SOURCE_DIR "/tests/data/reports/merged/";
const std::string kRo = "pytorch_bf16_compile compile_mode=reduce-overhead";
const std::string kDefault = "pytorch_bf16_compile compile_mode=default";

Report load(const std::string& file) {
  return decode_report(nlohmann::json::parse(test::read_file(kDir + file)), kDir + file);
}
Report merged() { return merge_reports({load("ours.json"), load("pt-default.json"), load("pt-reduce-overhead.json")}); }

// The <svg> element with this id.
std::string svg_of(const std::string& html, const std::string& id) {
  const std::size_t at = html.find("id=\"" + id + "\"");
  if (at == std::string::npos) return "";
  const std::size_t begin = html.rfind("<svg ", at), end = html.find("</svg>", at);
  return html.substr(begin, end + 6 - begin);
}

bool has(const std::string& text, const std::string& what) { return text.find(what) != std::string::npos; }

TEST(MergedReports, PairByTheParametersBothSidesHaveAndTellModesApart) {
  const Report rep = merged();
  std::vector<std::string> variants;
  for (const auto& r : rep.results) variants.push_back(r.variant);
  EXPECT_EQ(variants, (std::vector<std::string>{"ours_bf16", "cublas_bf16", kDefault, kRo}));
  // One shape for all four: ours' engine-only parameters (one value each) are left out.
  for (const auto& r : rep.results) {
    EXPECT_EQ(r.params, rep.results.front().params) << r.variant;
    EXPECT_FALSE(r.params.has("graph"));
    EXPECT_TRUE(std::holds_alternative<std::int64_t>(r.params.at("clip_norm"))) << r.variant;  // 1.0 and 1
  }
  ASSERT_FALSE(rep.merge_notes.empty());
  EXPECT_EQ(rep.merge_notes.front(), "graph=true (only in ours.json)");
  // The curves read the configuration from the name: rebuilt without the variant's old name.
  EXPECT_EQ(rep.results[3].name.rfind("train_transformer/" + kRo + "/batch:4/seq_len:2048/", 0), 0u);
}

// Reports of one GPU merge without a warning; of two, the warning names both with their
// files (issue 34; the CLI side: compare_cli_test's ReportCli).
TEST(MergedReports, DifferentGpusAreAWarningNamingBoth) {
  EXPECT_TRUE(merged().merge_warnings.empty());
  Report ours = load("ours.json"), other = load("pt-default.json"), none = load("pt-reduce-overhead.json");
  other.environment.gpu->name = "NVIDIA H100 80GB HBM3";
  none.environment.gpu.reset();
  const Report m = merge_reports({ours, other, none});
  ASSERT_EQ(m.merge_warnings.size(), 1u);
  EXPECT_EQ(m.merge_warnings[0], "the reports ran on different GPUs: NVIDIA H200 (" + kDir + "ours.json), NVIDIA H100 "
                                 "80GB HBM3 (" + kDir + "pt-default.json), no GPU (" + kDir +
                                 "pt-reduce-overhead.json); their timings are not comparable");
  EXPECT_NE(render_report(m, "md").find("| Warning | the reports ran on different GPUs"), std::string::npos);
}

TEST(MergedReports, MarkdownNamesBothModesAndShowsTheStepSideBySide) {
  const std::string md = render_report(merged(), "md");
  EXPECT_FALSE(has(md, "(2)"));
  EXPECT_TRUE(has(md, "| " + kDefault + " | passed |"));
  EXPECT_TRUE(has(md, "| " + kRo + " | passed |"));
  EXPECT_TRUE(has(md, "| Not paired on | graph=true (only in ours.json); world_size=1 (only in ours.json)"));
  EXPECT_TRUE(has(md, "| variant | ms/step | tokens/s | MFU | forward | backward | optimizer |"));
  EXPECT_TRUE(has(md, "| ours_bf16 | 18.83 | 435159 | - | - | - | - |")) << md;
  EXPECT_TRUE(has(md, "| " + kRo + " | 18.51 | 442591 | - | 6.08 ms (33%) | 9.11 ms (49%) | 3.32 ms (18%) |"));
  EXPECT_TRUE(has(md, "| " + kDefault + " | 20.36 | 402355 | 19.0% | 6.68 ms (33%) | 10.02 ms (49%) | 3.66 ms (18%) |"));
  EXPECT_TRUE(has(md, "ours_bf16, cublas_bf16: phase times unavailable with graph: true"));
}

TEST(MergedReports, HtmlPutsPyTorchInTheChartsAgainstASizeParameter) {
  const std::string html = render_report(merged(), "html");
  const std::string speed = svg_of(html, "speedup-0");
  ASSERT_FALSE(speed.empty()) << "no speedup chart";
  for (const auto& v : {std::string("ours_bf16"), kDefault, kRo}) EXPECT_TRUE(has(speed, ">" + v + "<")) << v;
  const std::string tp = svg_of(html, "throughput-0");
  EXPECT_TRUE(has(tp, "train_transformer: TFLOP/s against seq_len"));
  EXPECT_TRUE(has(tp, ">seq_len (tokens)<"));
  EXPECT_FALSE(has(tp, "clip_norm<"));
  for (const auto& v : {kDefault, kRo}) EXPECT_TRUE(has(tp, "data-label=\"" + v + "\"")) << v;
  // Legends keep the end of a long label: the two modes read apart.
  EXPECT_TRUE(has(tp, ">pytorch_bf...e=reduce-overhead<title>"));
  EXPECT_TRUE(has(tp, ">pytorch_bf...pile_mode=default<title>"));
  EXPECT_TRUE(has(html, "<a href=\"#training\">Training step</a>"));
  EXPECT_TRUE(has(html, "<tr><td>" + kRo + "</td><td class=\"num\">18.51</td><td class=\"num\">442591</td>"
                        "<td class=\"num\">-</td><td class=\"num\">6.08 ms (33%)</td>"));
  EXPECT_TRUE(has(html, "<tr><td>ours_bf16</td><td class=\"num\">18.83</td><td class=\"num\">435159</td>"));
}

// The issue-18 fixtures: seq_len 13 (src_len = tgt_len = 0: equal lengths) and seq_len 64
// with src_len 64, tgt_len 48 are unrelated shapes; no line joins them.
TEST(MergedReports, NoLineJoinsUnrelatedShapes) {
  const std::string curves = HARNESS_SOURCE_DIR "/tests/data/reports/curves/";
  const Report rep = merge_reports({decode_report(nlohmann::json::parse(test::read_file(curves + "transformer.json")), "t"),
                                    decode_report(nlohmann::json::parse(test::read_file(curves + "pytorch.json")), "p")});
  const std::string tp = svg_of(render_report(rep, "html"), "throughput-0");
  ASSERT_FALSE(tp.empty());
  EXPECT_EQ(tp.find("<polyline"), std::string::npos);
  EXPECT_TRUE(has(tp, "points not joined: they differ in src_len, tgt_len too"));
}

Result make(const std::string& variant, std::vector<std::pair<std::string, ParamValue>> params,
            nlohmann::json extra = nullptr) {
  Result r;
  r.problem = "p";
  r.variant = variant;
  for (auto& [k, v] : params) r.params.set(k, v);
  r.name = "p/" + variant + "/" + r.params.describe('/');
  r.extra = std::move(extra);
  return r;
}

TEST(MergeAlign, AParameterOneSideVariesStaysAndIsReadFromTheName) {
  std::vector<Result> rs = {make("ours", {{"n", std::int64_t{1}}, {"graph", true}}),
                            make("ours", {{"n", std::int64_t{1}}, {"graph", false}}),
                            make("torch", {{"n", std::int64_t{1}}})};
  rs[2].name = "p/torch/n:1/graph:false";  // pytorch_transformer.py's names carry the engine's defaults
  const auto notes = align_merged_results(rs, {0, 0, 1}, {"a.json", "b.json"});
  EXPECT_TRUE(notes.empty());
  ASSERT_TRUE(rs[2].params.has("graph"));
  EXPECT_EQ(rs[2].params.at("graph"), ParamValue(false));
}

TEST(MergeAlign, VariantsOfOneNameWithNothingApartTakeTheFileThenANumber) {
  std::vector<Result> rs = {make("v", {{"n", std::int64_t{1}}}), make("v", {{"n", 1.0}})};
  align_merged_results(rs, {0, 1}, {"dir/a.json", "dir/b.json"});
  EXPECT_EQ(rs[0].variant, "v (a.json)");
  EXPECT_EQ(rs[1].variant, "v (b.json)");
  std::vector<Result> same = {make("v", {{"n", std::int64_t{1}}}), make("v", {{"n", std::int64_t{1}}})};
  align_merged_results(same, {0, 1}, {"a.json", "a.json"});
  EXPECT_EQ(same[0].variant, "v");
  EXPECT_EQ(same[1].variant, "v (2)");
  // A differing short extra field names them (long texts do not).
  std::vector<Result> gemm = {make("v", {{"n", std::int64_t{1}}}, {{"gemm", "wgmma"}, {"why", "a long text"}}),
                              make("v", {{"n", std::int64_t{1}}}, {{"gemm", "cublas"}, {"why", "another text"}})};
  align_merged_results(gemm, {0, 1}, {"a.json", "b.json"});
  EXPECT_EQ(gemm[0].variant, "v gemm=wgmma");
  EXPECT_EQ(gemm[1].variant, "v gemm=cublas");
}

}  // namespace
}  // namespace harness
