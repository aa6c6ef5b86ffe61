// The report pages of issue 20: speed relative to a reference (geometric means), the
// comparison page (verdict rows, exit code), the history over several runs (CSV rows,
// regression steps), the memory chart (left out when every value is the same, else
// plotted against the parameter that drives it), variant colours, and the trace page.
#include <gtest/gtest.h>

#include <cmath>
#include <regex>

#include <fmt/format.h>

#include "render/compare_html.hpp"
#include "harness/error.hpp"
#include "measure/stats.hpp"
#include "render/report_history.hpp"
#include "render/report_html.hpp"
#include "render/report_render.hpp"
#include "render/report_speedup.hpp"
#include "render/report_timeline.hpp"
#include "test_support.hpp"

namespace harness {
namespace {

using nlohmann::json;

using test::count;

std::string fmt_name(const std::string& problem, const std::string& variant, long long n) {
  return problem + "/" + variant + "/N:" + std::to_string(n);
}

std::string fmt_row(const std::string& verdict) {
  return "<tr class=\"" + verdict + "\"><td class=\"verdict\">" + verdict + "</td>";
}

Result timed(const std::string& variant, long long n, std::vector<double> samples, const std::string& problem = "gemm") {
  Result r;
  r.problem = problem;
  r.variant = variant;
  r.case_name = "square";
  r.params.set("N", n);
  r.name = fmt_name(problem, variant, n);
  r.status = Status::passed;
  Timing t;
  t.samples = samples;
  t.stats = compute_stats(samples);
  r.timing = t;
  r.backend = "cuda";
  return r;
}

Report report_of(std::vector<Result> results, const std::string& date = "2026-01-01T00:00:00Z",
                 const std::string& commit = "abc") {
  Report rep;
  rep.format = "harness-report";
  rep.schema_version = 2;
  rep.suite.name = "t";
  rep.environment.date = date;
  rep.environment.git_commit = commit;
  rep.environment.raw = {{"date", date}, {"git_commit", commit}, {"host", "h"}};
  rep.results = std::move(results);
  return rep;
}

std::vector<double> around(double median, int n = 30) {
  std::vector<double> v;
  for (int i = 0; i < n; ++i) v.push_back(median * (1 + 0.002 * ((i % 7) - 3)));
  return v;
}

// Each share carries a 95% bootstrap interval: md and html `2.00x (LO-HI)`, csv two more
// columns; the method is said on the page; fewer than 5 samples: the share alone.
TEST(Speedup, EachShareCarriesItsBootstrapIntervalInEveryPage) {
  const Report rep = report_of({timed("cublas", 64, around(1e-3)), timed("tiled", 64, around(2e-3)),
                                timed("one", 64, {4e-3})});
  ReportOptions options;
  options.reference = "cublas";
  std::vector<const Result*> rows;
  for (const auto& r : rep.results) rows.push_back(&r);
  const auto ratio = reference_ratio(rep.results[1], rows, "cublas");
  ASSERT_TRUE(ratio && ratio->interval);
  EXPECT_DOUBLE_EQ(ratio->share, 0.5);
  EXPECT_LE(ratio->interval->lo, 0.5);
  EXPECT_GE(ratio->interval->hi, 0.5);
  EXPECT_LT(ratio->interval->hi - ratio->interval->lo, 0.01);  // +-0.6% spread, 30 samples
  const std::string text = reference_ratio_text(*ratio);
  EXPECT_TRUE(std::regex_match(text, std::regex(R"(0\.5x \(0\.49\d*-0\.50\d*\))"))) << text;
  EXPECT_FALSE(reference_ratio(rep.results[0], rows, "cublas")->interval);  // the reference itself
  EXPECT_FALSE(reference_ratio(rep.results[2], rows, "cublas")->interval);  // one sample

  const std::string md = render_report_markdown(rep, options);
  EXPECT_NE(md.find("| " + text + " |\n"), std::string::npos) << md;
  EXPECT_NE(md.find("| 0.25x |\n"), std::string::npos) << md;
  EXPECT_NE(md.find("percentile bootstrap, 2000 resamples"), std::string::npos) << md;
  EXPECT_EQ(md, render_report_markdown(rep, options));  // deterministic

  const std::string csv = render_report_csv(rep, options);
  EXPECT_NE(csv.find(",reference,speedup_vs_reference,speedup_ci95_low,speedup_ci95_high\n"), std::string::npos) << csv;
  EXPECT_NE(csv.find(fmt::format(",cublas,0.5,{},{}\n", ratio->interval->lo, ratio->interval->hi)), std::string::npos)
      << csv;
  EXPECT_NE(csv.find(",cublas,0.25,,\n"), std::string::npos) << csv;

  const std::string html = render_report_html(rep, options);
  EXPECT_NE(html.find(">" + text + "</text>"), std::string::npos);
  EXPECT_NE(html.find("percentile bootstrap, 2000 resamples"), std::string::npos);
}

TEST(Speedup, GeometricMeanOfSharesAgainstTheVendorVariant) {
  // tiled: 2x and 8x slower than cublas at the two sizes -> shares 0.5 and 0.125 ->
  // geometric mean sqrt(0.0625) = 0.25. fast: 2x faster at one size -> 2.
  const Report rep = report_of({timed("cublas", 64, around(1e-3)), timed("tiled", 64, around(2e-3)),
                                timed("fast", 64, around(0.5e-3)), timed("cublas", 128, around(1e-2)),
                                timed("tiled", 128, around(8e-2))});
  const auto g = speedup_geomeans(rep, "");
  ASSERT_EQ(g.size(), 3u);
  EXPECT_EQ(g[0].variant, "cublas");
  EXPECT_NEAR(g[0].geomean, 1.0, 1e-12);
  EXPECT_EQ(g[1].variant, "tiled");
  EXPECT_EQ(g[1].reference, "cublas");
  EXPECT_EQ(g[1].shapes, 2u);
  EXPECT_NEAR(g[1].geomean, 0.25, 1e-9);
  EXPECT_NEAR(g[1].min, 0.125, 1e-9);
  EXPECT_NEAR(g[1].max, 0.5, 1e-9);
  EXPECT_EQ(g[2].variant, "fast");
  EXPECT_NEAR(g[2].geomean, 2.0, 1e-9);
  // A chosen reference; "none"; one the problem does not have.
  const auto t = speedup_geomeans(rep, "tiled");
  ASSERT_FALSE(t.empty());
  EXPECT_NEAR(t[0].geomean, 4.0, 1e-9);  // cublas against tiled: 2x and 8x -> 4
  EXPECT_TRUE(speedup_geomeans(rep, "none").empty());
  EXPECT_TRUE(speedup_geomeans(rep, "nosuch").empty());
  const std::string html = render_report_html(rep, ReportOptions{});
  EXPECT_EQ(count(html, "class=\"bars\""), 1u);
  EXPECT_NE(html.find(">0.25x</td>"), std::string::npos);
}

TEST(Speedup, VendorVariantByName) {
  const Result a = timed("cub_sort", 1, around(1)), b = timed("mine", 1, around(1)), c = timed("cublas", 1, around(1));
  EXPECT_EQ(html::vendor_variant({&b, &a}), "cub_sort");
  EXPECT_EQ(html::vendor_variant({&a, &c}), "cublas");  // cublas is preferred over cub
  EXPECT_EQ(html::vendor_variant({&b}), "");
  const Result d = timed("cubic", 1, around(1));
  EXPECT_EQ(html::vendor_variant({&d}), "");  // not "cub" + '_'
}

TEST(ComparePage, VerdictRowsExitCodeAndEnvironmentDiff) {
  const Report base = report_of({timed("tiled", 64, around(1e-3)), timed("naive", 64, around(5e-3)),
                                 timed("gone", 64, around(1e-3))},
                                "2026-01-01T00:00:00Z", "aaa");
  Result failed = timed("naive", 64, around(5e-3));
  failed.status = Status::failed;
  failed.timing.reset();
  const Report cand = report_of({timed("tiled", 64, around(1.3e-3)), failed, timed("added", 64, around(1e-3))},
                                "2026-01-02T00:00:00Z", "bbb");
  const Comparison c = compare(base, cand, CompareOptions{});
  ASSERT_TRUE(c.regression);
  EXPECT_EQ(comparison_exit_code(c), 1);
  const std::string html = render_comparison_html(c, base, cand);
  EXPECT_NE(html.find("harness compare exits <b>1</b>"), std::string::npos);
  for (const char* v : {"slower", "failed", "new", "missing"})
    EXPECT_EQ(count(html, fmt_row(v)), 1u) << v;
  // Sorted: failed first, then slower.
  EXPECT_LT(html.find(fmt_row("failed")), html.find(fmt_row("slower")));
  EXPECT_LT(html.find(fmt_row("slower")), html.find(fmt_row("missing")));
  EXPECT_NE(html.find("+30.0%"), std::string::npos);
  // Environments: date and commit differ, host does not.
  EXPECT_NE(html.find("2 of 3 entries differ"), std::string::npos);
  EXPECT_EQ(count(html, "<tr class=\"diff\">"), 2u);
  EXPECT_EQ(html.find("<script"), std::string::npos);

  const Comparison same = compare(base, base, CompareOptions{});
  EXPECT_EQ(comparison_exit_code(same), 0);
  EXPECT_NE(render_comparison_html(same, base, base).find("harness compare exits <b>0</b>"), std::string::npos);
}

TEST(History, CsvRowsAndRegressionSteps) {
  const Report r1 = report_of({timed("tiled", 64, around(1e-3)), timed("cublas", 64, around(5e-4))},
                              "2026-01-01T00:00:00Z", "c1");
  const Report r2 = report_of({timed("tiled", 64, around(1e-3)), timed("cublas", 64, around(5e-4))},
                              "2026-01-02T00:00:00Z", "c2");
  const Report r3 = report_of({timed("tiled", 64, around(1.25e-3)), timed("cublas", 64, around(5e-4))},
                              "2026-01-03T00:00:00Z", "c3");
  const std::string csv = render_history_csv({r1, r2, r3});
  std::vector<std::string> lines;
  for (std::size_t pos = 0, next; pos < csv.size(); pos = next + 1) {
    next = csv.find('\n', pos);
    lines.push_back(csv.substr(pos, next - pos));
  }
  ASSERT_EQ(lines.size(), 7u);  // header + 3 runs x 2 results
  EXPECT_EQ(lines[0], "run,label,date,commit,result,problem,variant,status,median_s,q1_s,q3_s,verdict_vs_previous");
  EXPECT_EQ(lines[1].rfind("1,2026-01-01 00:00 c1,2026-01-01T00:00:00Z,c1,gemm/tiled/N:64,gemm,tiled,passed,", 0), 0u)
      << lines[1];
  EXPECT_EQ(lines[1].back(), ',');  // the first run has no verdict
  EXPECT_EQ(lines[3].substr(lines[3].rfind(',') + 1), "same");
  EXPECT_EQ(lines[5].substr(lines[5].rfind(',') + 1), "slower");
  EXPECT_EQ(lines[6].substr(lines[6].rfind(',') + 1), "same");
  // The median column is the run's median.
  const auto cols = [](const std::string& l) {
    std::vector<std::string> out;
    for (std::size_t p = 0, n; p <= l.size(); p = n + 1) {
      n = l.find(',', p);
      if (n == std::string::npos) n = l.size();
      out.push_back(l.substr(p, n - p));
    }
    return out;
  };
  EXPECT_NEAR(std::stod(cols(lines[5])[8]), 1.25e-3, 1e-12);
  const std::string html = render_history_html({r1, r2, r3});
  EXPECT_NE(html.find("1 step(s) that harness compare calls a regression"), std::string::npos);
  EXPECT_EQ(count(html, "class=\"flag\""), 1u);
  EXPECT_EQ(count(html, "class=\"band\""), 2u);  // one shaded band per series
  EXPECT_THROW(render_history_csv({r1}), InputError);
}

TEST(MemoryChart, LeftOutWhenEveryValueIsTheSame) {
  Result a = timed("cublas", 64, around(1e-3)), b = timed("cublas", 128, around(2e-3)), c = timed("tiled", 64, around(1e-3));
  a.workspace_peak_bytes = b.workspace_peak_bytes = 32u << 20;
  const std::string html = render_report_html(report_of({a, b, c}));
  EXPECT_EQ(html.find("id=\"memory-0\""), std::string::npos);
  EXPECT_NE(html.find("every result that used extra device memory used the same 32.0 MiB (cublas); no chart."),
            std::string::npos);
}

TEST(MemoryChart, AgainstTheDrivingParameterOneSeriesPerVariant) {
  // Workspace grows with N and not with the batch: N is the x axis, one series per variant.
  std::vector<Result> rows;
  for (long long n : {64, 128, 256})
    for (long long batch : {1, 2})
      for (const char* v : {"naive", "flash"}) {
        Result r = timed(v, n, around(1e-3), "attention");
        r.params.set("batch", batch);
        r.workspace_peak_bytes = static_cast<std::size_t>(n * n * (std::string(v) == "naive" ? 4 : 1));
        rows.push_back(r);
      }
  const std::string html = render_report_html(report_of(rows));
  const auto start = html.find("id=\"memory-0\"");
  ASSERT_NE(start, std::string::npos);
  const std::string chart = html.substr(start, html.find("</svg>", start) - start);
  EXPECT_NE(chart.find("extra device memory against N"), std::string::npos);
  EXPECT_NE(chart.find(">N (elements)<"), std::string::npos);
  EXPECT_EQ(count(chart, "class=\"series\""), 2u);
  EXPECT_NE(chart.find("extra device memory ("), std::string::npos);
}

TEST(Colors, AVariantKeepsItsColorAcrossCharts) {
  Result a = timed("tiled", 64, around(2e-3)), b = timed("tiled", 128, around(9e-3));
  Result c = timed("cublas", 64, around(1e-3)), d = timed("cublas", 128, around(4e-3));
  a.work.flops = c.work.flops = 1e9;
  b.work.flops = d.work.flops = 8e9;
  a.workspace_peak_bytes = 100;
  b.workspace_peak_bytes = 400;
  const std::string html = render_report_html(report_of({c, d, a, b}));
  // cublas comes first in the report: palette 0 everywhere; tiled palette 1 in the
  // throughput chart, the memory chart (where it is the only series) and the bars.
  const std::string c0 = svg::color(0), c1 = svg::color(1);
  const auto mem = html.find("id=\"memory-0\"");
  ASSERT_NE(mem, std::string::npos);
  const std::string memory = html.substr(mem, html.find("</svg>", mem) - mem);
  EXPECT_NE(memory.find("stroke=\"" + c1 + "\""), std::string::npos);
  EXPECT_EQ(memory.find("fill=\"" + c0 + "\""), std::string::npos);
  const auto bars = html.find("class=\"bars\"");
  ASSERT_NE(bars, std::string::npos);
  EXPECT_NE(html.substr(bars, html.find("</svg>", bars) - bars).find("fill=\"" + c1 + "\""), std::string::npos);
}

TEST(TracePage, DrawsRangesKernelsAndFlows) {
  const json trace = {{"traceEvents", json::array({
      {{"ph", "M"}, {"name", "thread_name"}, {"pid", 2}, {"tid", 7}, {"args", {{"name", "stream 7"}}}},
      {{"ph", "X"}, {"pid", 1}, {"tid", 1}, {"name", "suite"}, {"cat", "suite"}, {"ts", 0}, {"dur", 100}, {"args", {{"depth", 0}}}},
      {{"ph", "X"}, {"pid", 1}, {"tid", 1}, {"name", "gemm.tiled N=64"}, {"cat", "variant"}, {"ts", 10}, {"dur", 80}, {"args", {{"depth", 1}}}},
      {{"ph", "X"}, {"pid", 1}, {"tid", 2}, {"name", "cudaLaunchKernel"}, {"cat", "api"}, {"ts", 20}, {"dur", 2}, {"args", {{"correlation_id", 5}}}},
      {{"ph", "X"}, {"pid", 2}, {"tid", 7}, {"name", "tiled_kernel"}, {"cat", "kernel"}, {"ts", 25}, {"dur", 30},
       {"args", {{"variant", "gemm.tiled N=64"}, {"grid", {2, 2, 1}}, {"block", {16, 16, 1}}, {"registers_per_thread", 32}}}},
      {{"ph", "s"}, {"pid", 1}, {"tid", 2}, {"id", 5}, {"ts", 20}},
      {{"ph", "f"}, {"pid", 2}, {"tid", 7}, {"id", 5}, {"ts", 25}, {"bp", "e"}},
  })}};
  const std::string html = render_trace_html(trace, "t.json");
  EXPECT_NE(html.find("2 NVTX ranges, 1 kernels, 0 copies, 0 fills, 1 launch arrows"), std::string::npos);
  EXPECT_NE(html.find("GPU stream 7"), std::string::npos);
  EXPECT_NE(html.find("grid [2,2,1] block [16,16,1], 32 registers"), std::string::npos);
  EXPECT_EQ(count(html, "stroke=\"#d04a02\""), 2u);  // the arrow in the whole-run and the zoomed view
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_THROW(render_trace_html(json::object(), "x.json"), InputError);
}

// The report page's kernel timelines (issue 34) come from the profiling pass: the page says
// so, and an idle stretch longer than the timed median (in no timed sample: the traced
// run's host work between launches) is cut out and drawn as a break, not to scale.
TEST(KernelTimelines, SayTheyAreTheProfilingPassAndCutIdleLongerThanTheTimedRun) {
  Result r = timed("cublas", 256, around(11.7e-6));
  // 7 us of kernel, 1.5 ms idle (the traced run's host work), 7 us of kernel.
  r.profile = {{"kernels",
                {{"timeline", {{"names", {"gemm", "epilogue"}}, {"kernels", {{0.0, 7e-6, 0}, {1.507e-3, 7e-6, 1}}}}}}}};
  Result quick = timed("tiled", 256, around(30e-6));
  // A 2 us gap, shorter than the 30 us median: drawn to scale.
  quick.profile = {{"kernels", {{"timeline", {{"names", {"a", "b"}}, {"kernels", {{0.0, 10e-6, 0}, {12e-6, 10e-6, 1}}}}}}}};
  const std::string html = kernel_timelines_html(report_of({r, quick}));
  EXPECT_NE(html.find("From the profiling pass, not the timed samples"), std::string::npos) << html;
  EXPECT_NE(html.find("not kernel time"), std::string::npos) << html;
  EXPECT_EQ(count(html, "class=\"gap-cut\""), 1u) << html;
  EXPECT_NE(html.find("<title>1.500 ms idle, cut out: host work between launches in the profiling pass (not kernel "
                      "time; longer than the timed median 11.70 us, so in no timed sample)</title>"),
            std::string::npos)
      << html;
  EXPECT_NE(html.find(">1.514 ms (1.500 ms cut)</text>"), std::string::npos) << html;
  EXPECT_NE(html.find(">22.00 us</text>"), std::string::npos) << html;
  // The second kernel starts right after the break (14 px), not 99% of the way along.
  const std::regex second(R"re(<rect x="([0-9.]+)"[^>]*><title>epilogue:)re");
  std::smatch m;
  ASSERT_TRUE(std::regex_search(html, m, second)) << html;
  EXPECT_NEAR(std::stod(m[1]), 300 + 540 / 2.0 - 7 + 14, 1.0);
  // No timeline anywhere: no note, the reason instead.
  EXPECT_EQ(kernel_timelines_html(report_of({timed("tiled", 64, around(1e-3))})).find("profiling pass, not"),
            std::string::npos);
}

}  // namespace
}  // namespace harness
