// `harness compare`, `harness report` and `harness validate` as a user runs them: output,
// files and exit codes (0 ok, 1 regression, 2 bad input).
#include <gtest/gtest.h>

#include <cstdlib>

#include <fstream>

#include <nlohmann/json.hpp>

#include "test_support.hpp"

namespace harness {
namespace {

using test::run_command;

const std::string kExe = HARNESS_EXE;
const std::string kReports = HARNESS_SOURCE_DIR "/tests/data/reports/";

std::string compare(const std::string& base, const std::string& cand, const std::string& extra = "") {
  return kExe + " compare " + kReports + base + " " + kReports + cand + (extra.empty() ? "" : " " + extra);
}

bool has(const std::string& text, const std::string& what) { return text.find(what) != std::string::npos; }

TEST(CompareCli, SameBuildTwiceIsExit0) {
  const auto r = run_command(compare("gemm_base.json", "gemm_rerun.json"));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(has(r.output, "result: no regression (34 same, 9 skipped)")) << r.output;
  EXPECT_TRUE(has(r.output, "gemm/tiled M=4096 N=4096 K=4096")) << r.output;
  EXPECT_FALSE(has(r.output, "warning:")) << r.output;
}

// gemm_base.json / gemm_slow.json (tiled 10% slower) with the tiled results edited by `edit`,
// written to temp files; returns the compare command line for them.
template <class Edit>
std::string edited_pair(const std::string& tag, Edit edit, const std::string& extra = "") {
  auto load = [](const std::string& f) {
    std::ifstream in(kReports + f);
    return nlohmann::json::parse(in);
  };
  nlohmann::json base = load("gemm_base.json"), cand = load("gemm_slow.json");
  for (auto* rep : {&base, &cand})
    for (auto& r : (*rep)["results"])
      if (r.value("variant", "") == "tiled") edit(r, rep == &cand);
  const std::string bp = test::temp_path(tag + "_base.json"), cp = test::temp_path(tag + "_cand.json");
  std::ofstream(bp) << base.dump();
  std::ofstream(cp) << cand.dump();
  return kExe + " compare " + bp + " " + cp + (extra.empty() ? "" : " " + extra);
}

TEST(CompareCli, ClocksApartMakeAChangeAmbiguousAndFailOnAmbiguousMakesItExit1) {
  auto clocks = [](nlohmann::json& r, bool cand) {
    r["clocks"] = {{"min_mhz", cand ? 1600 : 1950}, {"median_mhz", cand ? 1650 : 1980}, {"max_mhz", 1980},
                   {"threshold", 0.75}, {"throttled_batches", 0}, {"throttled", false}, {"mhz", {cand ? 1650 : 1980}}};
  };
  auto r = run_command(edited_pair("clocks", clocks));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(has(r.output, "ambiguous  (would be slower, but the SM clocks differ: median 1980 MHz (baseline) vs 1650 MHz "
                            "(candidate), -16.7% > 5%)"))
      << r.output;
  EXPECT_TRUE(has(r.output, "result: no regression (5 ambiguous, 29 same, 9 skipped)")) << r.output;
  r = run_command(edited_pair("clocks", clocks, "--fail-on ambiguous"));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(has(r.output, "result: REGRESSION: 5 ambiguous")) << r.output;
  r = run_command(edited_pair("clocks", clocks, "--format json"));
  const auto j = nlohmann::json::parse(r.output);
  EXPECT_EQ(j["total"]["ambiguous"], 5);
  r = run_command(edited_pair("clocks", clocks, "--format md"));
  EXPECT_TRUE(has(r.output, "| ambiguous |")) << r.output;
  r = run_command(edited_pair("clocks", clocks, "--format html"));
  EXPECT_TRUE(has(r.output, "5 ambiguous")) << r.output;
  EXPECT_EQ(run_command(edited_pair("clocks", clocks, "--fail-on slower")).exit_code, 2);
}

// Issue 33: a candidate marked suspicious (faster than the device's roof) never counts as
// faster; its pair says `suspicious` and what it would have been.
TEST(CompareCli, ASuspiciousCandidateIsNeverFaster) {
  auto halve_and_mark = [](nlohmann::json& res, bool cand) {
    if (!cand) return;
    for (auto& x : res["samples_s"]) x = x.get<double>() * 0.5;
    for (const char* k : {"min_s", "max_s", "mean_s", "median_s", "stddev_s", "q1_s", "q3_s"})
      res["stats"][k] = res["stats"][k].get<double>() * 0.5;
    res["integrity"] = {{"recheck", "passed"}, {"suspicious", true}, {"suspicious_reason", "median 1 us is 1% of the roof"},
                        {"outside_timed_region", false}};
  };
  auto r = run_command(edited_pair("suspicious", halve_and_mark));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(has(r.output, "suspicious  (would be faster, but the candidate is suspicious: median 1 us is 1% of the roof)"))
      << r.output;
  EXPECT_FALSE(has(r.output, " faster  ")) << r.output;
  EXPECT_TRUE(has(r.output, "result: no regression (5 suspicious, 29 same, 9 skipped)")) << r.output;
  r = run_command(edited_pair("suspicious", halve_and_mark, "--format json"));
  EXPECT_EQ(nlohmann::json::parse(r.output)["total"]["suspicious"], 5);
  EXPECT_EQ(nlohmann::json::parse(r.output)["total"]["faster"], 0);
}

// The other side: an honest candidate is never slower than a marked baseline.
TEST(CompareCli, AnHonestCandidateIsNeverSlowerThanASuspiciousBaseline) {
  const auto r = run_command(edited_pair("suspicious_base", [](nlohmann::json& res, bool cand) {
    if (!cand)
      res["integrity"] = {{"recheck", "passed"}, {"suspicious", false}, {"outside_timed_region", true},
                          {"outside_reason", "1 kernel(s) on another stream"}};
  }));
  EXPECT_EQ(r.exit_code, 0) << r.output;  // gemm_slow's tiled results are 10% slower: not a regression here
  EXPECT_TRUE(has(r.output, "suspicious  (would be slower, but the baseline is marked 'work outside the timed region': "
                            "1 kernel(s) on another stream)"))
      << r.output;
}

TEST(CompareCli, ThrottledInOneRunOnlyIsSaidInTheReason) {
  const auto r = run_command(edited_pair("throttle", [](nlohmann::json& res, bool cand) {
    if (cand) res["throttled"] = true;
  }));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(has(r.output, "ambiguous  (would be slower, but throttled in the candidate only)")) << r.output;
}

TEST(CompareCli, ABusyMachineWhoseSpreadCoversTheChangeIsNotSlower) {
  // Both runs of a busy machine: the quartiles 30% around the median.
  const auto r = run_command(edited_pair("busy", [](nlohmann::json& res, bool) {
    const double m = res["stats"]["median_s"];
    res["stats"]["q1_s"] = m * 0.7;
    res["stats"]["q3_s"] = m * 1.3;
  }));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_FALSE(has(r.output, "SLOWER")) << r.output;
  EXPECT_TRUE(has(r.output, "the runs' interquartile ranges overlap (")) << r.output;
}

TEST(CompareCli, NonFiniteStatsAreALocatedInputErrorAndMissingClocksAreFine) {
  // JSON has no NaN; 1e999 (infinity) is refused when the report is read.
  const std::string cp = test::temp_path("inf_cand.json");
  {
    std::ifstream in(kReports + "gemm_slow.json");
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const std::size_t at = text.find("\"median_s\":");
    ASSERT_NE(at, std::string::npos);
    const std::size_t end = text.find_first_of(",}", at);
    text = text.substr(0, at) + "\"median_s\": 1e999" + text.substr(end);
    std::ofstream(cp) << text;
  }
  const auto r = run_command(kExe + " compare " + kReports + "gemm_base.json " + cp);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(has(r.output, "harness: error: " + cp + ": not valid JSON (corrupt?): number overflow")) << r.output;
  // A negative median (or quartile, sample, SM clock) is refused, located, before any verdict.
  const auto neg = run_command(edited_pair("negative", [](nlohmann::json& res, bool cand) {
    if (cand) res["stats"]["median_s"] = -0.001;
  }));
  EXPECT_EQ(neg.exit_code, 2) << neg.output;
  EXPECT_TRUE(has(neg.output, "_cand.json: result 'gemm/tiled/M:256/N:256/K:256/alpha:1/beta:0': stats.median_s is "
                              "-0.001: expected a finite, non-negative number"))
      << neg.output;
  // Clocks missing in one report (a CPU run, an old report): compared as before.
  const auto ok = run_command(edited_pair("noclocks", [](nlohmann::json& res, bool cand) {
    if (cand) res.erase("clocks");
  }));
  EXPECT_EQ(ok.exit_code, 1) << ok.output;
  EXPECT_TRUE(has(ok.output, "result: REGRESSION: 5 slower")) << ok.output;
}

TEST(CompareCli, SlowedVariantIsExit1) {
  const auto r = run_command(compare("gemm_base.json", "gemm_slow.json"));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(has(r.output, "result: REGRESSION: 5 slower")) << r.output;
  for (const char* size : {"256", "512", "1024", "2048", "4096"})
    EXPECT_TRUE(has(r.output, std::string("gemm/tiled M=") + size)) << size;
  EXPECT_EQ(std::count(r.output.begin(), r.output.end(), '\n') > 10, true);
}

TEST(CompareCli, FailedCheckIsExit1) {
  const auto r = run_command(compare("gemm_base.json", "gemm_failed.json"));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(has(r.output, "FAILED  (failed in the candidate: check failed")) << r.output;
}

TEST(CompareCli, NewAndMissing) {
  auto r = run_command(compare("gemm_base.json", "gemm_changed.json"));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(has(r.output, "new  (not in the baseline)")) << r.output;
  EXPECT_TRUE(has(r.output, "missing  (not in the candidate)")) << r.output;
  r = run_command(compare("gemm_base.json", "gemm_changed.json", "--fail-on-missing"));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(has(r.output, "REGRESSION: 6 missing")) << r.output;
}

TEST(CompareCli, WarnsAboutDifferentGpusAndDrivers) {
  const auto r = run_command(compare("gemm_base.json", "gemm_other_gpu.json"));
  EXPECT_TRUE(has(r.output, "warning: GPUs differ: baseline NVIDIA H100 80GB HBM3, candidate NVIDIA H200")) << r.output;
  EXPECT_TRUE(has(r.output, "warning: CUDA drivers differ: baseline 13.0, candidate 12.8")) << r.output;
  EXPECT_TRUE(has(r.output, "warning: clock states")) << r.output;
}

// Reports of different GPUs side by side (issue 34): merged (md and html carry the warning
// too) or as a history, a warning naming both GPUs; reports of one GPU, none.
TEST(ReportCli, MergedOrHistoryOfDifferentGpusWarnsNamingBoth) {
  const std::string both = kReports + "gemm_base.json " + kReports + "gemm_other_gpu.json";
  const std::string warning = "the reports ran on different GPUs: NVIDIA H100 80GB HBM3 (" + kReports +
                              "gemm_base.json), NVIDIA H200 (" + kReports +
                              "gemm_other_gpu.json); their timings are not comparable";
  auto r = run_command(kExe + " report " + both + " --merge --format md");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output.rfind("harness: warning: " + warning + "\n", 0), 0u) << r.output;
  EXPECT_TRUE(has(r.output, "| Warning | " + warning + " |")) << r.output;
  r = run_command(kExe + " report " + both + " --merge --format html");
  EXPECT_TRUE(has(r.output, "<th>Warning</th><td>" + warning + "</td>")) << r.output;
  r = run_command(kExe + " report " + both + " --format csv");  // a history
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(has(r.output, "harness: warning: " + warning + "\n")) << r.output;
  r = run_command(kExe + " report " + kReports + "gemm_base.json " + kReports + "gemm_rerun.json --merge --format md");
  EXPECT_FALSE(has(r.output, "different GPUs")) << r.output;
  EXPECT_FALSE(has(r.output, "Warning")) << r.output;
}

TEST(CompareCli, FormatsAndOptions) {
  auto r = run_command(compare("gemm_base.json", "gemm_slow.json", "--format json"));
  EXPECT_EQ(r.exit_code, 1);
  const auto j = nlohmann::json::parse(r.output);
  EXPECT_TRUE(j["regression"].get<bool>());
  EXPECT_EQ(j["total"]["slower"], 5);
  r = run_command(compare("gemm_base.json", "gemm_slow.json", "--format md"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(has(r.output, "| gemm/tiled M=256 N=256 K=256 |")) << r.output;
  // A 10% slowdown is under a 15% threshold.
  r = run_command(compare("gemm_base.json", "gemm_slow.json", "--threshold 15%"));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  r = run_command(compare("gemm_base.json", "gemm_slow.json", "--threshold 15 --alpha 0.01"));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  // Only what --filter selects is compared: the slowed variant left out is no regression.
  r = run_command(compare("gemm_base.json", "gemm_slow.json", "--filter '^(?!gemm/tiled/)'"));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_FALSE(has(r.output, "gemm/tiled")) << r.output;
  r = run_command(compare("gemm_base.json", "gemm_slow.json", "--filter '/tiled/'"));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(has(r.output, "result: REGRESSION: 5 slower")) << r.output;
}

TEST(CompareCli, GoogleBenchmarkJson) {
  auto r = run_command(compare("gbench_base.json", "gbench_slow.json"));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(has(r.output, "BM_Copy/4096")) << r.output;
  r = run_command(compare("gbench_base.json", "gbench_aggregates.json"));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(has(r.output, "aggregates only")) << r.output;
}

TEST(CompareCli, BadInputIsExit2) {
  const std::string truncated = test::temp_path("truncated.json");
  const std::string text = test::read_file(kReports + "gemm_base.json");
  std::ofstream(truncated) << text.substr(0, 1000);
  const std::vector<std::string> commands = {
      kExe + " compare " + kReports + "gemm_base.json " + kReports + "no_such.json",
      kExe + " compare " + kReports + "gemm_base.json " + truncated,
      kExe + " compare " + kReports + "gemm_base.json",
      compare("gemm_base.json", "gemm_slow.json", "--threshold abc"),
      compare("gemm_base.json", "gemm_slow.json", "--threshold -3"),
      compare("gemm_base.json", "gemm_slow.json", "--alpha 2"),
      compare("gemm_base.json", "gemm_slow.json", "--format xml"),
      compare("gemm_base.json", "gemm_slow.json", "--filter '('"),
  };
  for (const auto& c : commands) {
    const auto r = run_command(c);
    EXPECT_EQ(r.exit_code, 2) << c << "\n" << r.output;
  }
  const auto r = run_command(kExe + " compare " + kReports + "gemm_base.json " + truncated);
  EXPECT_TRUE(has(r.output, "truncated")) << r.output;
  EXPECT_EQ(std::count(r.output.begin(), r.output.end(), '\n'), 1) << r.output;
}

TEST(ReportCli, MarkdownCsvHtml) {
  auto r = run_command(kExe + " report " + kReports + "gemm_base.json");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.output, test::read_file(HARNESS_SOURCE_DIR "/tests/data/golden/gemm_base.md"));
  r = run_command(kExe + " report " + kReports + "gemm_base.json --format csv");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.output.rfind("name,case,problem,variant,backend,", 0), 0u) << r.output.substr(0, 200);
  const std::string html = test::temp_path("report.html");
  r = run_command(kExe + " report " + kReports + "gemm_base.json --out " + html);  // format from the extension
  EXPECT_EQ(r.exit_code, 0) << r.output;
  const std::string page = test::read_file(html);
  EXPECT_EQ(page.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_TRUE(has(page, "<svg ")) << page.substr(0, 300);
  EXPECT_EQ(run_command(kExe + " report " + kReports + "gbench_base.json").exit_code, 2);
  EXPECT_EQ(run_command(kExe + " report " + kReports + "no_such.json").exit_code, 2);
  EXPECT_EQ(run_command(kExe + " report " + kReports + "gemm_base.json --format pdf").exit_code, 2);
}

// Gzip-compressed inputs, as reports/baselines keeps them: report, validate, compare and the
// trace page read them as they are; a truncated one is a located error (exit 2).
TEST(ReportCli, GzipCompressedReportsAndTracesReadAsTheyAre) {
#if !HARNESS_HAVE_ZLIB
  GTEST_SKIP() << "built without zlib: gzip-compressed reports are an error that says how to decompress them";
#endif
  const std::string gz = test::temp_path("gemm_base.json.gz");
  ASSERT_EQ(std::system(("gzip -c -n " + kReports + "gemm_base.json > " + gz).c_str()), 0);
  auto r = run_command(kExe + " report " + gz);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output, test::read_file(HARNESS_SOURCE_DIR "/tests/data/golden/gemm_base.md"));
  r = run_command(kExe + " validate " + gz);
  EXPECT_TRUE(has(r.output, "gemm_base.json.gz: valid harness-report, schema version 1, 43 results")) << r.output;
  r = run_command(kExe + " compare " + gz + " " + kReports + "gemm_base.json");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(has(r.output, "result: no regression")) << r.output;

  const std::string trace = test::temp_path("trace.json"), trace_gz = trace + ".gz";
  std::ofstream(trace) << R"({"traceEvents":[{"ph":"X","pid":1,"tid":1,"name":"t","cat":"suite","ts":0,"dur":10,"args":{"depth":0}}]})";
  ASSERT_EQ(std::system(("gzip -c -n " + trace + " > " + trace_gz).c_str()), 0);
  const std::string plain_html = test::temp_path("trace_plain.html"), gz_html = test::temp_path("trace_gz.html");
  EXPECT_EQ(run_command(kExe + " report " + trace + " --format trace-html --out " + plain_html).exit_code, 0);
  r = run_command(kExe + " report " + trace_gz + " --format trace-html --out " + gz_html);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  std::string page = test::read_file(gz_html);  // the same page but for the file's name in it
  for (std::size_t at; (at = page.find("trace.json.gz")) != std::string::npos;) page.replace(at, 13, "trace.json");
  EXPECT_EQ(page, test::read_file(plain_html));

  const std::string bytes = test::read_file(gz);
  const std::string cut = test::temp_path("cut.json.gz");
  std::ofstream(cut, std::ios::binary) << bytes.substr(0, bytes.size() / 2);
  r = run_command(kExe + " compare " + cut + " " + kReports + "gemm_base.json");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(has(r.output, cut + ": gzip-compressed but ")) << r.output;
  for (const auto& p : {gz, trace, trace_gz, plain_html, gz_html, cut}) std::remove(p.c_str());
}

TEST(ValidateCli, ValidInvalidNewerTruncated) {
  auto r = run_command(kExe + " validate " + kReports + "gemm_base.json " + kReports + "gemm_slow.json");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(has(r.output, "gemm_base.json: valid harness-report, schema version 1, 43 results")) << r.output;

  auto report = nlohmann::json::parse(test::read_file(kReports + "gemm_base.json"));
  report["schema_version"] = 3;
  const std::string newer = test::temp_path("newer.json");
  std::ofstream(newer) << report.dump();
  r = run_command(kExe + " validate " + newer);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(has(r.output, "report schema version 3 is newer than this harness understands (2)")) << r.output;
  EXPECT_EQ(std::count(r.output.begin(), r.output.end(), '\n'), 1) << r.output;

  const std::string truncated = test::temp_path("cut.json");
  const std::string text = test::read_file(kReports + "gemm_base.json");
  std::ofstream(truncated) << text.substr(0, text.size() - 10);
  r = run_command(kExe + " validate " + truncated);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(has(r.output, "not valid JSON (truncated or corrupt?)")) << r.output;
  EXPECT_EQ(std::count(r.output.begin(), r.output.end(), '\n'), 1) << r.output;

  report["schema_version"] = 1;
  report["results"][0].erase("status");
  const std::string invalid = test::temp_path("invalid.json");
  std::ofstream(invalid) << report.dump();
  r = run_command(kExe + " validate " + invalid);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(has(r.output, "results[0]: missing required key 'status'")) << r.output;
}

TEST(ValidateCli, AFreshRunIsValidAndComparesWithItself) {
  const std::string out = test::temp_path("fresh.json");
  auto r = run_command(kExe + " run tests/data/suites/tiny.yaml --quiet --out " + out);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  r = run_command(kExe + " validate " + out);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  r = run_command(kExe + " compare " + out + " " + out);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(has(r.output, "result: no regression")) << r.output;
  r = run_command(kExe + " report " + out + " --format html --out " + out + ".html");
  EXPECT_EQ(r.exit_code, 0) << r.output;
}

// The committed baselines are schema 1 reports: still compared and rendered.
TEST(BaselinesCli, SchemaOneBaselinesCompareSameAndRender) {
#if !HARNESS_HAVE_ZLIB
  GTEST_SKIP() << "built without zlib: the committed baselines are .json.gz";
#endif
  const std::string gemm = HARNESS_SOURCE_DIR "/reports/baselines/h200/gemm.json.gz";
  auto r = run_command(kExe + " compare " + gemm + " " + gemm);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(has(r.output, "result: no regression (97 same)")) << r.output;
  r = run_command(kExe + " report " + gemm + " --format md");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(has(r.output, "| variant | M | N | K | alpha | beta | status |")) << r.output.substr(0, 2000);
  r = run_command(kExe + " validate " + gemm);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(has(r.output, "valid harness-report, schema version 1")) << r.output;
}

// A report written before gemm had `dtype` and `layout` still pairs with today's run of the
// same results: the missing parameters are filled with their defaults (f32, nn), and the
// output says so. The candidate is a host-variant run of one baseline shape.
TEST(CompareCli, AnOldBaselinePairsAtTheDefaultsOfParametersAddedSince) {
#if !HARNESS_HAVE_ZLIB
  GTEST_SKIP() << "built without zlib: the committed baselines are .json.gz";
#endif
  const std::string base = HARNESS_SOURCE_DIR "/reports/baselines/h200/2026-11-23/gemm.json.gz";
  const std::string cand = harness::test::temp_path("compare_defaults.json");
  auto r = run_command(kExe + " run " + HARNESS_SOURCE_DIR "/suites/gemm.yaml --variants cpu --quiet --no-profile" +
                       " --filter '^gemm/cpu/M:256/N:256/K:256/alpha:1/beta:0/' --out " + cand);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  r = run_command(kExe + " compare " + base + " " + cand);
  EXPECT_TRUE(has(r.output, "parameters added since this report was written, paired at their defaults: "
                            "gemm: dtype = \"f32\"; gemm: layout = \"nn\"")) << r.output;
  EXPECT_FALSE(has(r.output, " new")) << r.output;  // the candidate's one result found its baseline
  EXPECT_TRUE(has(r.output, "96 missing")) << r.output;
  std::remove(cand.c_str());
}

}  // namespace
}  // namespace harness
