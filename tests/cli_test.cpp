// The `harness` executable as a user sees it: output, exit codes, reports, errors.
#include <filesystem>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "test_support.hpp"

namespace harness {
namespace {

using test::run_command;

const std::string kExe = HARNESS_EXE;
const std::string kPlugins = HARNESS_BINARY_DIR "/plugins/";

TEST(Cli, VersionAndHelp) {
  auto r = run_command(kExe + " --version");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.output.rfind("harness 0.1.0 (commit ", 0), 0u) << r.output;
  r = run_command(kExe + " --help");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.output.find("Exit codes: 0"), std::string::npos);
  EXPECT_NE(r.output.find("harness run suites/smoke.yaml"), std::string::npos);
  r = run_command(kExe + " run --help");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.output.find("--dry-run"), std::string::npos);
}

TEST(Cli, NoSubcommandOrUnknownOptionIsExit2) {
  EXPECT_EQ(run_command(kExe).exit_code, 2);
  EXPECT_EQ(run_command(kExe + " run tests/data/suites/tiny.yaml --bogus").exit_code, 2);
  const auto r = run_command(kExe + " run no_such_suite.yaml");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("no_such_suite.yaml"), std::string::npos);
}

// Every suite the repository ships expands (parses, its variants and parameters known) on
// a machine without a GPU: a typo in one is caught here, not in a GPU call.
TEST(Cli, EveryShippedSuiteExpandsInADryRun) {
  int suites = 0;
  for (const auto& f : std::filesystem::directory_iterator(HARNESS_SOURCE_DIR "/suites")) {
    if (f.path().extension() != ".yaml") continue;
    ++suites;
    const auto r = run_command(kExe + " run " + f.path().string() + " --dry-run");
    EXPECT_EQ(r.exit_code, 0) << f.path() << "\n" << r.output;
    EXPECT_NE(r.output.find("(dry run: nothing was executed)"), std::string::npos) << f.path() << "\n" << r.output;
    EXPECT_EQ(r.output.find(" 0 results"), std::string::npos) << f.path() << " expands to nothing\n" << r.output;
  }
  EXPECT_GE(suites, 20) << "suites/ not found or nearly empty";
}

TEST(Cli, OneSampleHasNoNoiseNotZeroNoise) {
  const std::string out = test::temp_path("one_sample.json");
  const auto r = run_command(kExe + " run tests/data/suites/one_sample.yaml --table --out " + out);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("noise n/a"), std::string::npos) << r.output;  // the progress line
  EXPECT_EQ(r.output.find("0.0%"), std::string::npos) << r.output;       // never "±0.0%"
  EXPECT_EQ(r.output.find("(noisy)"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("      n/a  "), std::string::npos) << r.output;  // the --table's noise column
  const auto j = nlohmann::json::parse(test::read_file(out));
  const auto& stats = j["results"][0]["stats"];
  EXPECT_EQ(stats["count"], 1);
  EXPECT_TRUE(stats["rel_noise"].is_null()) << stats.dump();
  EXPECT_EQ(stats["noise_reached"], false);
  const auto v = run_command(kExe + " validate " + out);
  EXPECT_EQ(v.exit_code, 0) << v.output;
  const auto md = run_command(kExe + " report " + out + " --format md");
  EXPECT_EQ(md.exit_code, 0) << md.output;
  EXPECT_NE(md.output.find("| n/a |"), std::string::npos) << md.output;
  EXPECT_NE(md.output.find("one sample: noise not known"), std::string::npos) << md.output;
  const auto csv = run_command(kExe + " report " + out + " --format csv");
  EXPECT_EQ(csv.exit_code, 0) << csv.output;
  EXPECT_NE(csv.output.find(",n/a,"), std::string::npos) << csv.output;
  std::remove(out.c_str());
  std::remove((out + ".journal.jsonl").c_str());
}

// A result two cases plan (same problem, variant and parameters) runs once, in its first
// case, with a note: results are identified by name (report, journal, --resume, compare),
// and two results of one name made the report hold the second case's twice.
TEST(Cli, AResultInTwoCasesRunsOnceInItsFirstCase) {
  const std::string out = test::temp_path("same_shape.json");
  const auto r = run_command(kExe + " run tests/data/suites/same_shape_two_cases.yaml --out " + out);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("harness: note: 1 result is in more than one case; each runs once, in its first case (e.g. "
                          "stream/cpu/op:copy/n:1000 in cases 'first' and 'second')"),
            std::string::npos)
      << r.output;
  const auto j = nlohmann::json::parse(test::read_file(out));
  std::vector<std::string> got;
  for (const auto& res : j["results"]) got.push_back(res["case"].get<std::string>() + " " + res["name"].get<std::string>());
  EXPECT_EQ(got, (std::vector<std::string>{"first stream/cpu/op:copy/n:1000", "first stream/cpu/op:copy/n:2000",
                                           "second stream/cpu/op:scale/n:1000"}));
  std::remove(out.c_str());
  std::remove((out + ".journal.jsonl").c_str());
}

TEST(Cli, SmokeRunWritesAValidReportAndJournal) {
  const std::string out = test::temp_path("tiny.json");
  const auto r = run_command(kExe + " run tests/data/suites/tiny.yaml --out " + out);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  // One progress line per result, then the summary: not the whole table again (issue 34),
  // only what did not pass, the skipped results one row per reason.
  EXPECT_NE(r.output.find("[1/8] passed  stream/cpu op=copy n=1000"), std::string::npos) << r.output;
  EXPECT_EQ(test::count(r.output, "stream/cpu op=copy n=1000 "), 1u) << r.output;
  EXPECT_EQ(r.output.find("result  "), std::string::npos) << r.output;
  if (r.output.find("4 skipped") != std::string::npos) {
    EXPECT_NE(r.output.find("\nNot passed or marked (4 of 8; --table lists every result):\n"
                            "stream/cuda op=copy n=1000 (+3 more)  skipped  no CUDA device"),
              std::string::npos)
        << r.output;
  }
  // Without a GPU the 4 cuda results are skipped; with one they pass.
  EXPECT_TRUE(r.output.find("8 results: 4 passed, 0 failed, 4 skipped, 0 errors") != std::string::npos ||
              r.output.find("8 results: 8 passed, 0 failed, 0 skipped, 0 errors") != std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("report: " + out), std::string::npos);
  const auto report = nlohmann::json::parse(test::read_file(out));
  EXPECT_EQ(report["schema"], "harness-report");
  EXPECT_EQ(report["results"].size(), 8u);
  EXPECT_EQ(report["environment"]["command_line"], "harness run tests/data/suites/tiny.yaml --out " + out);
  const auto& first = report["results"][0];
  EXPECT_EQ(first["variant"], "cpu");
  EXPECT_EQ(first["status"], "passed");
  EXPECT_TRUE(first["check"]["passed"].get<bool>());
  EXPECT_GE(first["samples_s"].size(), 3u);
  EXPECT_GT(first["stats"]["median_s"].get<double>(), 0);
  EXPECT_GT(first["rates"]["gbytes_per_s"].get<double>(), 0);
  // Without a GPU the cuda variant is skipped with the reason; with one it passes.
  const auto& second = report["results"][1];
  EXPECT_EQ(second["variant"], "cuda");
  if (second["status"] == "skipped") EXPECT_NE(second["reason"].get<std::string>().find("no CUDA device"), std::string::npos);
  else EXPECT_EQ(second["status"], "passed");
  // The journal holds the run's header line, then the same results, one JSON line each.
  const std::string journal = test::read_file(out + ".journal.jsonl");
  EXPECT_EQ(std::count(journal.begin(), journal.end(), '\n'), 1 + 8);
  EXPECT_EQ(journal.rfind("{\"event\":\"run\"", 0), 0u) << journal;
  std::remove(out.c_str());
  std::remove((out + ".journal.jsonl").c_str());
}

TEST(Cli, DryRunListsExpandedResultsAndRunsNothing) {
  const auto r = run_command(kExe + " run tests/data/suites/tiny.yaml --dry-run --variants cpu --filter n:4099");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("stream/cpu/op:copy/n:4099"), std::string::npos);
  EXPECT_NE(r.output.find("stream/cpu/op:triad/n:4099"), std::string::npos);
  EXPECT_EQ(r.output.find("n:1000"), std::string::npos);
  EXPECT_NE(r.output.find("2 results in 4 cases (dry run: nothing was executed)"), std::string::npos);
}

TEST(Cli, BadSuiteIsOneLocatedLineAndExit2) {
  const auto r = run_command(kExe + " run tests/data/suites/unknown_variant.yaml");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.output,
            "harness: error: tests/data/suites/unknown_variant.yaml:5:21: unknown variant 'cdua' of problem 'stream'; "
            "did you mean 'cuda'?\n");
}

TEST(Cli, VariantsTypoAndEmptySelectionAreExit2) {
  auto r = run_command(kExe + " run tests/data/suites/tiny.yaml --variants cpuu");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("--variants: no case of the suite has a variant 'cpuu'; did you mean 'cpu'?"), std::string::npos);
  r = run_command(kExe + " run tests/data/suites/tiny.yaml --filter nomatch");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.output, "harness: error: nothing to run: --filter 'nomatch' select no result (result names look like "
                      "stream/cpu/op:copy/n:1000)\n");
  r = run_command(kExe + " run tests/data/suites/tiny.yaml --filter '('");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("not a valid regular expression"), std::string::npos);
}

// Every argument error is one line, "harness: error: ...", and exit 2 (CLI11's own printer
// wrote two lines without the prefix).
TEST(Cli, ArgumentErrorsAreOneLinePrefixedAndExit2) {
  const auto one_line = [](const std::string& command, const std::string& expected) {
    const auto r = run_command(command);
    EXPECT_EQ(r.exit_code, 2) << command << "\n" << r.output;
    EXPECT_EQ(r.output.rfind("harness: error: ", 0), 0u) << command << "\n" << r.output;
    EXPECT_EQ(std::count(r.output.begin(), r.output.end(), '\n'), 1) << command << "\n" << r.output;
    EXPECT_NE(r.output.find(expected), std::string::npos) << command << "\n" << r.output;
  };
  one_line(kExe + " run tests/data/suites", "directory");
  one_line(kExe + " run no_such_suite.yaml", "no_such_suite.yaml");
  one_line(kExe + " report tests/data/suites/tiny.yaml --format pdf", "pdf");
  one_line(kExe + " run tests/data/suites/tiny.yaml --seed abc", "'abc' is not a seed");
  one_line(kExe + " run tests/data/suites/tiny.yaml --seed -1", "'-1' is not a seed");
  one_line(kExe + " run tests/data/suites/tiny.yaml --seed 18446744073709551616", "is not a seed");
  one_line(kExe + " gbench tests/data/suites/tiny.yaml --seed -1", "'-1' is not a seed");
  one_line(kExe + " run tests/data/suites/tiny.yaml --bogus", "--bogus");
  one_line(kExe, "subcommand");
  // The largest seed is still a seed.
  const auto r = run_command(kExe + " run tests/data/suites/tiny.yaml --dry-run --seed 18446744073709551615");
  EXPECT_EQ(r.exit_code, 0) << r.output;
}

// `harness report --reference VARIANT` in md and csv: a ratio column to the reference (as
// html's speedup section); a variant no result has is an input error with a did-you-mean.
TEST(Cli, ReportReferenceAddsARatioColumnToMarkdownAndCsv) {
  const std::string report = "tests/data/reports/gemm_base.json";
  auto r = run_command(kExe + " report " + report + " --format md --reference cublas");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find(" speed vs cublas |"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("| cublas |"), std::string::npos);
  EXPECT_NE(r.output.find("| cublas | 256 | 256 | 256 | passed |"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find(" 1.00x |\n"), std::string::npos) << r.output;  // the reference against itself
  // Without --reference the table is as before.
  EXPECT_EQ(run_command(kExe + " report " + report + " --format md").output.find("speed vs"), std::string::npos);
  r = run_command(kExe + " report " + report + " --format csv --reference cublas");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string head = r.output.substr(0, r.output.find('\n'));
  const std::string tail = ",reference,speedup_vs_reference,speedup_ci95_low,speedup_ci95_high";
  EXPECT_EQ(head.substr(head.size() - tail.size()), tail) << head;
  EXPECT_NE(r.output.find(",cublas,1,,\n"), std::string::npos) << r.output;  // no interval against itself
  for (const char* format : {"md", "csv", "html"}) {
    r = run_command(kExe + " report " + report + " --format " + format + " --reference cublass");
    EXPECT_EQ(r.exit_code, 2) << format;
    EXPECT_EQ(r.output, "harness: error: --reference 'cublass': no result of the report has this variant; did you "
                        "mean 'cublas'?\n")
        << format;
  }
  EXPECT_EQ(run_command(kExe + " report " + report + " --format md --reference none").exit_code, 0);
}

// A repeated YAML key is an error at the second (yaml-cpp would keep the first and drop
// the second silently); a suite name with '/' cannot steer the default report path.
TEST(Cli, DuplicateKeysAndPathLikeSuiteNamesAreExit2) {
  auto r = run_command(kExe + " run tests/data/suites/duplicate_key.yaml");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.output, "harness: error: tests/data/suites/duplicate_key.yaml:5:33: duplicate key 'n' (each key of a map "
                      "may appear once)\n");
  r = run_command(kExe + " run tests/data/suites/bad_name.yaml");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.output.rfind("harness: error: tests/data/suites/bad_name.yaml:2:8: suite name '../../tmp/escaped' contains", 0),
            0u)
      << r.output;
  EXPECT_EQ(std::count(r.output.begin(), r.output.end(), '\n'), 1) << r.output;
}

// The console prints op=copy; --filter takes that form as well as the names' op:copy.
TEST(Cli, FilterTakesTheConsoleFormOfParameters) {
  auto r = run_command(kExe + " run tests/data/suites/tiny.yaml --dry-run --variants cpu --filter 'op=copy/n=4099'");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("stream/cpu/op:copy/n:4099"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("1 results in 4 cases"), std::string::npos) << r.output;
  // A lookahead keeps its '='.
  r = run_command(kExe + " run tests/data/suites/tiny.yaml --dry-run --variants cpu --filter 'op:(?=triad)'");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("2 results in 4 cases"), std::string::npos) << r.output;
}

TEST(Cli, UnwritableOutputIsExit2BeforeAnyWork) {
  const auto r = run_command(kExe + " run tests/data/suites/tiny.yaml --out /proc/none/x.json");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("cannot open the journal"), std::string::npos);
  EXPECT_EQ(r.output.find("passed"), std::string::npos);
}

TEST(Cli, FailingCheckIsExit1AndTheVariantIsNotTimed) {
  const std::string out = test::temp_path("saxpy.json");
  const auto r = run_command(kExe + " run --plugin " + kPlugins + "example_plugin.so tests/data/suites/saxpy_strict.yaml --out " + out);
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("failed  saxpy/unfused"), std::string::npos) << r.output;
  const auto report = nlohmann::json::parse(test::read_file(out));
  for (const auto& res : report["results"]) {
    if (res["variant"] == "fused") {
      EXPECT_EQ(res["status"], "passed");
    } else {
      EXPECT_EQ(res["status"], "failed");
      EXPECT_GT(res["check"]["mismatches"].get<int>(), 0);
      EXPECT_TRUE(res["samples_s"].empty());  // never timed
    }
  }
  std::remove(out.c_str());
  std::remove((out + ".journal.jsonl").c_str());
}

TEST(Cli, PluginErrorsAreExit2) {
  auto r = run_command(kExe + " list --plugin " + kPlugins + "not_a_plugin.so");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("not a harness plugin"), std::string::npos);
  r = run_command(kExe + " list --plugin " + kPlugins + "wrong_abi_plugin.so");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("plugin ABI version 999"), std::string::npos);
  r = run_command(kExe + " list --plugin /nonexistent.so");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("plugin library not found"), std::string::npos);
}

TEST(Cli, ListShowsProblemsParametersAndVariants) {
  // The default: one line per problem with its variants, the steady rule once (issue 34:
  // it was hundreds of lines of paragraphs).
  auto r = run_command(kExe + " list");
  ASSERT_EQ(r.exit_code, 0);
  EXPECT_NE(r.output.find("\nstream               cpu, cuda\n"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("default triad"), std::string::npos) << r.output;
  // the steady and the interleave rules once each, not per problem
  EXPECT_EQ(test::count(r.output, "by default"), 2u) << r.output;
  EXPECT_EQ(test::count(r.output, "interleave: "), 1u) << r.output;
  EXPECT_NE(r.output.find("`harness list PROBLEM`: a problem's parameters"), std::string::npos) << r.output;
  EXPECT_LT(test::count(r.output, "\n"), 40u) << r.output;
  // One problem in full; --verbose: every problem in full.
  r = run_command(kExe + " list stream");
  ASSERT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.output.rfind("stream: STREAM", 0), 0u) << r.output;
  EXPECT_NE(r.output.find("default triad"), std::string::npos);
  EXPECT_NE(r.output.find("    cuda         cuda  grid-stride"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("gemm"), std::string::npos) << r.output;
  r = run_command(kExe + " list --verbose");
  EXPECT_NE(r.output.find("stream: STREAM"), std::string::npos);
  EXPECT_NE(r.output.find("\ngemm: "), std::string::npos);
  EXPECT_EQ(r.output, run_command(kExe + " list all").output);
  r = run_command(kExe + " list --help");
  EXPECT_NE(r.output.find("Default: one line per problem with its variants. A problem's name:"), std::string::npos)
      << r.output;
  r = run_command(kExe + " list gemmm");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.output, "harness: error: list: 'gemmm' is not a problem (nor problems, variants or all); did you mean "
                      "'gemm'?\n");
  r = run_command(kExe + " list variants");
  EXPECT_NE(r.output.find("stream/cuda"), std::string::npos);
  r = run_command(kExe + " list --json --plugin " + kPlugins + "example_plugin.so");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto j = nlohmann::json::parse(r.output);
  bool saxpy = false;
  for (const auto& p : j["problems"]) saxpy |= p["name"] == "saxpy";
  EXPECT_TRUE(saxpy);
  EXPECT_EQ(j["problems"][0]["parameters"][0]["name"].is_string(), true);
}

}  // namespace
}  // namespace harness
