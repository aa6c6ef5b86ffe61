// harness compare: the Mann-Whitney U test, matching, verdicts, summaries, warnings,
// Google Benchmark JSON, and the text/md/json renderings. Reports are built in memory.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include <nlohmann/json.hpp>

#include "compare/compare.hpp"
#include "render/compare_text.hpp"
#include "harness/error.hpp"
#include "compare/mann_whitney.hpp"

namespace harness {
namespace {

using nlohmann::json;

// ---------------------------------------------------------------------------------------
// Mann-Whitney U

TEST(MannWhitney, ExactMatchesTheTextbookExample) {
  // scipy.stats.mannwhitneyu(males, females, method="exact"): U = 17, p = 1/9.
  const std::vector<double> males = {19, 22, 16, 29, 24}, females = {20, 11, 17, 12};
  const MannWhitney m = mann_whitney_u(males, females);
  EXPECT_TRUE(m.exact);
  EXPECT_DOUBLE_EQ(m.u1, 17);
  EXPECT_NEAR(m.p_value, 1.0 / 9.0, 1e-12);
  EXPECT_NEAR(m.prob_greater, 17.0 / 20.0, 1e-12);
}

TEST(MannWhitney, NormalApproximationMatchesTheFormula) {
  // Beyond the exact limit: z with the continuity correction, as scipy's asymptotic method.
  std::vector<double> a, b;
  for (int i = 0; i < 40; ++i) a.push_back(i);
  for (int i = 0; i < 40; ++i) b.push_back(i + 10.5);
  const MannWhitney m = mann_whitney_u(a, b);
  EXPECT_FALSE(m.exact);
  const double n1 = 40, n2 = 40, mean = n1 * n2 / 2, sd = std::sqrt(n1 * n2 * (n1 + n2 + 1) / 12);
  // U1: pairs with a > b. a_i > b_j when i > j + 10.5, i.e. sum over j of (29 - j) for j < 29.
  double u = 0;
  for (double x : a)
    for (double y : b) u += x > y ? 1 : 0;
  EXPECT_DOUBLE_EQ(m.u1, u);
  EXPECT_NEAR(m.p_value, std::erfc((std::fabs(u - mean) - 0.5) / sd / std::sqrt(2.0)), 1e-12);
}

TEST(MannWhitney, IdenticalSamplesAndAllTiesGiveOne) {
  const std::vector<double> a = {1, 2, 3, 4, 5, 6, 7, 8};
  EXPECT_NEAR(mann_whitney_u(a, a).p_value, 1.0, 1e-12);
  const std::vector<double> same(10, 2.5);
  EXPECT_DOUBLE_EQ(mann_whitney_u(same, same).p_value, 1.0);
  EXPECT_DOUBLE_EQ(mann_whitney_u({}, a).p_value, 1.0);
}

TEST(MannWhitney, SmallestPossiblePValue) {
  EXPECT_NEAR(mann_whitney_min_p(3, 3), 0.1, 1e-12);
  EXPECT_NEAR(mann_whitney_min_p(4, 4), 2.0 / 70.0, 1e-12);
  EXPECT_DOUBLE_EQ(mann_whitney_min_p(1, 1), 1.0);
  EXPECT_LT(mann_whitney_min_p(30, 30), 1e-10);
  // Fully separated samples reach it exactly.
  const std::vector<double> a = {1, 2, 3, 4}, b = {5, 6, 7, 8};
  EXPECT_NEAR(mann_whitney_u(a, b).p_value, 2.0 / 70.0, 1e-12);
}

// Brute force over every way to split the pooled values: the exact test, ties included.
double brute_force_p(const std::vector<double>& a, const std::vector<double>& b) {
  std::vector<double> pooled = a;
  pooled.insert(pooled.end(), b.begin(), b.end());
  const std::size_t n = pooled.size(), n1 = a.size();
  auto u_of = [&](const std::vector<bool>& in_a) {
    double u = 0;
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = 0; j < n; ++j)
        if (in_a[i] && !in_a[j]) u += pooled[i] > pooled[j] ? 1 : pooled[i] == pooled[j] ? 0.5 : 0;
    return u;
  };
  std::vector<bool> observed(n, false);
  for (std::size_t i = 0; i < n1; ++i) observed[i] = true;
  const double u_obs = u_of(observed);
  std::vector<bool> sel(n, false);
  std::fill(sel.end() - static_cast<long>(n1), sel.end(), true);
  double all = 0, low = 0, high = 0;
  do {
    const double u = u_of(sel);
    ++all;
    if (u <= u_obs + 1e-9) ++low;
    if (u >= u_obs - 1e-9) ++high;
  } while (std::next_permutation(sel.begin(), sel.end()));
  return std::min(1.0, 2 * std::min(low, high) / all);
}

TEST(MannWhitney, ExactWithTiesMatchesBruteForce) {
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> value(0, 5);  // few distinct values: many ties
  for (int trial = 0; trial < 30; ++trial) {
    std::vector<double> a(3 + trial % 5), b(4 + trial % 3);
    for (auto& x : a) x = value(rng);
    for (auto& x : b) x = value(rng) + (trial % 2);
    const MannWhitney m = mann_whitney_u(a, b);
    ASSERT_TRUE(m.exact);
    EXPECT_NEAR(m.p_value, brute_force_p(a, b), 1e-9) << "trial " << trial;
  }
}

TEST(MannWhitney, LargeSamplesDetectAShiftAndNotNoise) {
  std::mt19937 rng(11);
  std::normal_distribution<double> noise(1.0, 0.01);
  std::vector<double> a(500), b(500), c(500);
  for (auto& x : a) x = noise(rng);
  for (auto& x : b) x = noise(rng);
  for (auto& x : c) x = noise(rng) * 1.02;
  EXPECT_GT(mann_whitney_u(b, a).p_value, 0.05);
  EXPECT_LT(mann_whitney_u(c, a).p_value, 1e-10);
  EXPECT_GT(mann_whitney_u(c, a).prob_greater, 0.9);
}

// ---------------------------------------------------------------------------------------
// Reports in memory

// True when one of `lines` contains `text`.
bool any_contains(const std::vector<std::string>& lines, const std::string& text) {
  return std::any_of(lines.begin(), lines.end(), [&](const std::string& l) { return l.find(text) != std::string::npos; });
}

std::vector<double> samples(double median, double noise, int n, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> z(0, 1);
  std::vector<double> s(static_cast<std::size_t>(n));
  for (auto& x : s) x = median * std::exp(noise * z(rng));
  return s;
}

json result(const std::string& variant, int n_param, const std::vector<double>& s, const std::string& status = "passed",
            bool check = true, const std::string& problem = "gemm") {
  json r = {{"name", problem + "/" + variant + "/N:" + std::to_string(n_param)},
            {"case", "c"},
            {"problem", problem},
            {"variant", variant},
            {"backend", "cuda"},
            {"params", {{"N", n_param}}},
            {"status", status},
            {"reason", status == "passed" ? "" : "check failed: 12 mismatches"},
            {"check", {{"passed", check}}},
            {"samples_s", s}};
  if (!s.empty()) {
    std::vector<double> sorted = s;
    std::sort(sorted.begin(), sorted.end());
    const std::size_t k = sorted.size();
    r["stats"] = {{"median_s", k % 2 ? sorted[k / 2] : (sorted[k / 2 - 1] + sorted[k / 2]) / 2}, {"count", k}};
  } else {
    r["stats"] = nullptr;
  }
  return r;
}

json report(const std::vector<json>& results, const std::string& gpu = "NVIDIA H100 80GB HBM3",
            const std::string& driver = "13.0") {
  return {{"schema", "harness-report"},
          {"schema_version", 1},
          {"environment",
           {{"gpu", {{"name", gpu}, {"sm_clock_max_mhz", 1980}, {"memory_clock_mhz", 2619}}},
            {"cuda_driver", driver},
            {"cuda_runtime", "13.0"},
            {"date", "2026-11-22T04:00:00Z"}}},
          {"suite", {{"name", "unit"}, {"settings", {{"cache", "cold"}}}}},
          {"results", results}};
}

Comparison run(const json& base, const json& cand, CompareOptions o = {}) {
  return compare(decode_report(base, "base.json"), decode_report(cand, "cand.json"), o);
}

const Pair& pair_named(const Comparison& c, const std::string& name) {
  for (const auto& p : c.pairs)
    if (p.name == name) return p;
  throw std::runtime_error("no pair " + name);
}

TEST(Compare, IdenticalSamplesAreSame) {
  const json r = report({result("tiled", 1024, samples(1e-3, 0.01, 30, 1)),
                         result("naive", 1024, samples(4e-3, 0.01, 30, 2))});
  const Comparison c = run(r, r);
  ASSERT_EQ(c.pairs.size(), 2u);
  for (const auto& p : c.pairs) {
    EXPECT_EQ(p.verdict, Verdict::same) << p.name;
    EXPECT_DOUBLE_EQ(*p.change, 0);
    EXPECT_NEAR(*p.p_value, 1.0, 1e-9);
  }
  EXPECT_FALSE(c.regression);
  EXPECT_TRUE(c.warnings.empty());
}

TEST(Compare, TenPercentSlowerWithTightNoiseIsSlower) {
  const json base = report({result("tiled", 1024, samples(1e-3, 0.01, 30, 1))});
  const json cand = report({result("tiled", 1024, samples(1.1e-3, 0.01, 30, 3))});
  const Comparison c = run(base, cand);
  const Pair& p = c.pairs.at(0);
  EXPECT_EQ(p.verdict, Verdict::slower);
  EXPECT_TRUE(p.regression);
  EXPECT_NEAR(*p.change, 0.10, 0.02);
  EXPECT_LT(*p.p_value, 1e-6);
  EXPECT_GT(*p.effect_size, 0.9);
  EXPECT_TRUE(c.regression);
  // The other way round it is faster, and not a regression.
  const Comparison back = run(cand, base);
  EXPECT_EQ(back.pairs.at(0).verdict, Verdict::faster);
  EXPECT_FALSE(back.regression);
}

TEST(Compare, TwoRunsOfOneBuildAreSame) {
  // Fresh noise and a small drift of the median: same, although with 1000 samples the
  // U test alone calls a 1% shift significant.
  const json base = report({result("tiled", 1024, samples(1e-3, 0.02, 1000, 1))});
  const json cand = report({result("tiled", 1024, samples(1.01e-3, 0.02, 1000, 5))});
  const Comparison c = run(base, cand);
  EXPECT_EQ(c.pairs.at(0).verdict, Verdict::same);
  EXPECT_FALSE(c.regression);
}

TEST(Compare, NoisyOverlappingSamplesAreSame) {
  // 40% noise, medians 8% apart: past the threshold, but the samples overlap.
  const json base = report({result("tiled", 1024, samples(1e-3, 0.4, 25, 1))});
  const json cand = report({result("tiled", 1024, samples(1.08e-3, 0.4, 25, 9))});
  const Comparison c = run(base, cand);
  const Pair& p = c.pairs.at(0);
  EXPECT_EQ(p.verdict, Verdict::same) << p.note;
  EXPECT_FALSE(c.regression);
  EXPECT_EQ(p.note.rfind("change not significant (p = ", 0), 0u) << p.note;
}

TEST(Compare, BelowTheThresholdIsSameEvenWhenSignificant) {
  const json base = report({result("tiled", 1024, samples(1e-3, 0.001, 30, 1))});
  const json cand = report({result("tiled", 1024, samples(1.03e-3, 0.001, 30, 3))});
  EXPECT_EQ(run(base, cand).pairs.at(0).verdict, Verdict::same);
  CompareOptions tight;
  tight.threshold = 0.02;
  EXPECT_EQ(run(base, cand, tight).pairs.at(0).verdict, Verdict::slower);
}

TEST(Compare, FailedCheckInTheCandidateIsARegression) {
  const json base = report({result("tiled", 1024, samples(1e-3, 0.01, 30, 1)),
                            result("naive", 1024, samples(4e-3, 0.01, 30, 2))});
  const json cand = report({result("tiled", 1024, {}, "failed", false),
                            result("naive", 1024, samples(4e-3, 0.01, 30, 2), "error", true)});
  const Comparison c = run(base, cand);
  EXPECT_EQ(pair_named(c, "gemm/tiled/N:1024").verdict, Verdict::failed);
  EXPECT_TRUE(pair_named(c, "gemm/tiled/N:1024").regression);
  EXPECT_NE(pair_named(c, "gemm/tiled/N:1024").note.find("check failed"), std::string::npos);
  EXPECT_EQ(pair_named(c, "gemm/naive/N:1024").verdict, Verdict::failed);
  EXPECT_TRUE(c.regression);
  EXPECT_EQ(c.total.failed, 2u);
}

TEST(Compare, CrashedOrTimedOutIsARegression) {
  const json base = report({result("tiled", 1024, samples(1e-3, 0.01, 30, 1))});
  for (const char* status : {"crashed", "timeout"}) {
    const Comparison c = run(base, report({result("tiled", 1024, {}, status, true)}));
    EXPECT_EQ(c.pairs.at(0).verdict, Verdict::failed) << status;
    EXPECT_TRUE(c.regression);
  }
}

TEST(Compare, NewAndMissing) {
  const json base = report({result("tiled", 1024, samples(1e-3, 0.01, 30, 1)),
                            result("naive", 1024, samples(4e-3, 0.01, 30, 2))});
  const json cand = report({result("tiled", 1024, samples(1e-3, 0.01, 30, 1)),
                            result("wmma", 1024, samples(5e-4, 0.01, 30, 4))});
  const Comparison c = run(base, cand);
  ASSERT_EQ(c.pairs.size(), 3u);
  EXPECT_EQ(c.pairs[0].verdict, Verdict::same);
  EXPECT_EQ(c.pairs[1].name, "gemm/naive/N:1024");
  EXPECT_EQ(c.pairs[1].verdict, Verdict::missing);
  EXPECT_EQ(c.pairs[2].name, "gemm/wmma/N:1024");
  EXPECT_EQ(c.pairs[2].verdict, Verdict::new_);
  EXPECT_FALSE(c.regression);
  CompareOptions strict;
  strict.fail_on_missing = true;
  EXPECT_TRUE(run(base, cand, strict).regression);
  // A new entry that fails its check is still a regression.
  const json bad = report({result("tiled", 1024, samples(1e-3, 0.01, 30, 1)), result("wmma", 1024, {}, "failed", false)});
  const Comparison with_bad = run(base, bad);
  EXPECT_EQ(pair_named(with_bad, "gemm/wmma/N:1024").verdict, Verdict::failed);
}

TEST(Compare, SkippedOnEitherSide) {
  const json base = report({result("tiled", 1024, samples(1e-3, 0.01, 30, 1)), result("cublas", 1024, {}, "skipped")});
  const json cand = report({result("tiled", 1024, {}, "skipped"), result("cublas", 1024, {}, "skipped")});
  const Comparison c = run(base, cand);
  EXPECT_EQ(c.pairs[0].verdict, Verdict::missing);  // timed before, not now
  EXPECT_NE(c.pairs[0].note.find("skipped in the candidate"), std::string::npos);
  EXPECT_EQ(c.pairs[1].verdict, Verdict::skipped);
  EXPECT_FALSE(c.regression);
  const Comparison back = run(cand, base);
  EXPECT_EQ(back.pairs[0].verdict, Verdict::new_);
}

TEST(Compare, MatchesByProblemVariantAndParametersNotByOrder) {
  json a = result("tiled", 1024, samples(1e-3, 0.01, 30, 1));
  json b = result("tiled", 2048, samples(8e-3, 0.01, 30, 2));
  json moved = b;
  moved["name"] = "renamed";  // the name does not matter between harness reports
  const Comparison c = run(report({a, b}), report({moved, a}));
  ASSERT_EQ(c.pairs.size(), 2u);
  for (const auto& p : c.pairs) EXPECT_EQ(p.verdict, Verdict::same) << p.name;
}

TEST(Compare, TooFewSamplesFallBackToTheThreshold) {
  const json base = report({result("tiled", 1024, {1e-3, 1.01e-3})});
  const json cand = report({result("tiled", 1024, {1.2e-3, 1.21e-3})});
  const Comparison c = run(base, cand);
  const Pair& p = c.pairs.at(0);
  EXPECT_EQ(p.verdict, Verdict::slower);
  EXPECT_FALSE(p.p_value.has_value());
  EXPECT_NE(p.note.find("threshold alone"), std::string::npos);
}

TEST(Compare, GeometricMeanPerProblem) {
  // Exact ratios 1.1 and 1/1.1 (noise-free samples): geometric mean 1.
  const std::vector<double> one(20, 1e-3), more(20, 1.1e-3), less(20, 1e-3 / 1.1);
  const json base = report({result("a", 1, one), result("b", 1, one), result("c", 1, one, "passed", true, "stream")});
  const json cand = report({result("a", 1, more), result("b", 1, less), result("c", 1, more, "passed", true, "stream")});
  const Comparison c = run(base, cand);
  ASSERT_EQ(c.problems.size(), 2u);
  EXPECT_EQ(c.problems[0].problem, "gemm");
  EXPECT_EQ(c.problems[0].compared, 2u);
  EXPECT_NEAR(c.problems[0].geomean_ratio, 1.0, 1e-12);
  EXPECT_EQ(c.problems[0].slower, 1u);
  EXPECT_EQ(c.problems[0].faster, 1u);
  EXPECT_NEAR(c.problems[1].geomean_ratio, 1.1, 1e-12);
  EXPECT_NEAR(c.total.geomean_ratio, std::cbrt(1.1), 1e-12);
}

TEST(Compare, WarnsWhenGpusDriversOrClocksDiffer) {
  const json r = report({result("tiled", 1024, samples(1e-3, 0.01, 30, 1))});
  json other = report({result("tiled", 1024, samples(1e-3, 0.01, 30, 1))}, "NVIDIA H200", "12.8");
  other["environment"]["gpu"]["sm_clock_max_mhz"] = 1755;
  other["suite"]["settings"]["cache"] = "hot";
  const Comparison c = run(r, other);
  auto has = [&](const std::string& text) {
    return std::any_of(c.warnings.begin(), c.warnings.end(),
                       [&](const std::string& w) { return w.find(text) != std::string::npos; });
  };
  EXPECT_TRUE(has("GPUs differ: baseline NVIDIA H100 80GB HBM3, candidate NVIDIA H200"));
  EXPECT_TRUE(has("CUDA drivers differ: baseline 13.0, candidate 12.8"));
  EXPECT_TRUE(has("clock states"));
  EXPECT_TRUE(has("cache mode"));
  json no_gpu = r;
  no_gpu["environment"]["gpu"] = nullptr;
  const auto no_gpu_warnings = run(r, no_gpu).warnings;
  EXPECT_TRUE(any_contains(no_gpu_warnings,
                           "one report has a GPU and the other none: baseline NVIDIA H100 80GB HBM3, candidate no GPU"))
      << ::testing::PrintToString(no_gpu_warnings);
}

TEST(Compare, DuplicateNamesAreKeptApartWithAWarning) {
  const json a = result("tiled", 1024, samples(1e-3, 0.01, 30, 1));
  const Report s = decode_report(report({a, a}), "dup.json");
  ASSERT_EQ(s.results.size(), 2u);
  const Comparison c = compare(s, s, {});
  ASSERT_EQ(c.pairs.size(), 2u);
  EXPECT_NE(c.pairs[0].key, c.pairs[1].key);
  ASSERT_EQ(c.warnings.size(), 2u);  // once per side
  EXPECT_NE(c.warnings[0].find("appears 2 times"), std::string::npos);
}

// ---------------------------------------------------------------------------------------
// Google Benchmark JSON

json gbench(const std::vector<std::pair<std::string, std::vector<double>>>& runs, bool aggregates_only = false,
            const std::string& unit = "ns") {
  json benches = json::array();
  for (const auto& [name, times] : runs) {
    if (!aggregates_only)
      for (double t : times)
        benches.push_back({{"name", name}, {"run_name", name}, {"run_type", "iteration"}, {"iterations", 100},
                           {"real_time", t}, {"cpu_time", t}, {"time_unit", unit}});
    std::vector<double> s = times;
    std::sort(s.begin(), s.end());
    benches.push_back({{"name", name + "_median"}, {"run_name", name}, {"run_type", "aggregate"},
                       {"aggregate_name", "median"}, {"real_time", s[s.size() / 2]}, {"cpu_time", 0},
                       {"time_unit", unit}});
  }
  return {{"context", {{"host_name", "h"}, {"library_build_type", "release"}}}, {"benchmarks", benches}};
}

TEST(CompareGoogleBenchmark, IterationsAreSamples) {
  const Report s = decode_report(gbench({{"BM_A/64", {1000, 1010, 990}}, {"BM_B", {5, 6, 7}}}, false, "us"), "g.json");
  EXPECT_EQ(s.format, "google-benchmark");
  ASSERT_EQ(s.results.size(), 2u);
  EXPECT_EQ(s.results[0].name, "BM_A/64");
  EXPECT_EQ(s.results[0].problem, "BM_A");
  ASSERT_TRUE(s.results[0].timing);
  ASSERT_EQ(s.results[0].timing->samples.size(), 3u);
  EXPECT_DOUBLE_EQ(s.results[0].timing->samples[0], 1000e-6);
  EXPECT_DOUBLE_EQ(s.results[0].timing->stats.median, 1000e-6);
}

TEST(CompareGoogleBenchmark, AggregatesOnlyGiveTheMedian) {
  const Report s = decode_report(gbench({{"BM_A", {1, 2, 3}}}, true), "g.json");
  ASSERT_EQ(s.results.size(), 1u);
  ASSERT_TRUE(s.results[0].timing);
  EXPECT_TRUE(s.results[0].timing->samples.empty());
  EXPECT_DOUBLE_EQ(s.results[0].timing->stats.median, 2e-9);
}

TEST(CompareGoogleBenchmark, SlowerRunIsFlagged) {
  std::vector<double> base, slow;
  for (double x : samples(1000, 0.01, 12, 1)) base.push_back(x);
  for (double x : samples(1200, 0.01, 12, 2)) slow.push_back(x);
  const Comparison c = run(gbench({{"BM_A", base}, {"BM_B", base}}), gbench({{"BM_A", slow}, {"BM_B", base}}));
  EXPECT_EQ(pair_named(c, "BM_A").verdict, Verdict::slower);
  EXPECT_EQ(pair_named(c, "BM_B").verdict, Verdict::same);
  EXPECT_TRUE(c.regression);
}

TEST(CompareGoogleBenchmark, ErrorsAndBadInput) {
  json g = gbench({{"BM_A", {1, 2, 3}}});
  g["benchmarks"].push_back({{"name", "BM_E"}, {"run_type", "iteration"}, {"error_occurred", true},
                             {"error_message", "boom"}, {"real_time", 0}});
  const Report s = decode_report(g, "g.json");
  ASSERT_EQ(s.results.size(), 2u);
  EXPECT_EQ(s.results[1].status, Status::error);
  EXPECT_EQ(s.results[1].reason, "boom");
  json bad_unit = gbench({{"BM_A", {1}}}, false, "fortnights");
  EXPECT_THROW(decode_report(bad_unit, "g.json"), InputError);
  EXPECT_THROW(decode_report(json::object(), "x.json"), InputError);
  EXPECT_THROW(decode_report(json::array(), "x.json"), InputError);
}

TEST(CompareGoogleBenchmark, MixedWithAHarnessReportMatchesByName) {
  const json h = report({result("tiled", 1024, samples(1e-3, 0.01, 30, 1))});
  std::vector<double> ns;
  for (double x : samples(1e-3, 0.01, 30, 1)) ns.push_back(x * 1e9);
  const Comparison c = run(h, gbench({{"gemm/tiled/N:1024", ns}}));
  ASSERT_EQ(c.pairs.size(), 1u);
  EXPECT_EQ(c.pairs[0].verdict, Verdict::same);
  EXPECT_TRUE(any_contains(c.warnings,
                           "comparing a harness-report file with a google-benchmark file: matched by benchmark name"))
      << ::testing::PrintToString(c.warnings);
}

// ---------------------------------------------------------------------------------------
// Renderings

TEST(CompareRender, TextMarkdownAndJson) {
  const json base = report({result("tiled", 1024, samples(1e-3, 0.01, 30, 1)), result("naive", 1024, samples(4e-3, 0.01, 30, 2))});
  const json cand = report({result("tiled", 1024, samples(1.1e-3, 0.01, 30, 3)), result("naive", 1024, samples(4e-3, 0.01, 30, 2))});
  const Comparison c = run(base, cand);
  const std::string text = render_comparison(c, "text");
  EXPECT_NE(text.find("gemm/tiled"), std::string::npos);
  EXPECT_NE(text.find("SLOWER"), std::string::npos);
  EXPECT_NE(text.find("result: REGRESSION: 1 slower"), std::string::npos) << text;
  const std::string md = render_comparison(c, "md");
  EXPECT_NE(md.find("| benchmark | baseline | candidate | change | p | effect | verdict | note |"), std::string::npos);
  EXPECT_NE(md.find("**slower**"), std::string::npos);
  const json j = json::parse(render_comparison(c, "json"));
  EXPECT_EQ(j["schema"], "harness-compare");
  EXPECT_TRUE(j["regression"].get<bool>());
  EXPECT_EQ(j["pairs"].size(), 2u);
  EXPECT_EQ(j["pairs"][0]["verdict"], "slower");
  EXPECT_EQ(j["problems"][0]["problem"], "gemm");
}

TEST(CompareRender, ShortNamesDropParametersCommonToTheProblem) {
  json a = result("tiled", 1024, samples(1e-3, 0.01, 30, 1));
  json b = result("tiled", 2048, samples(8e-3, 0.01, 30, 2));
  a["name"] = "gemm/tiled/N:1024/alpha:1";
  b["name"] = "gemm/tiled/N:2048/alpha:1";
  const Comparison c = run(report({a, b}), report({a, b}));
  EXPECT_EQ(c.pairs[0].display, "gemm/tiled N=1024");
  EXPECT_EQ(c.problems[0].fixed_params, "alpha=1");
}

}  // namespace
}  // namespace harness
