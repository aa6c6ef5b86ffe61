// `harness gbench`: Google Benchmark's own JSON, with the fields its tools/compare.py and
// the common dashboards read (GitHub's benchmark action "googlecpp", Bencher's
// "cpp_google", which also needs context.caches), checks before timing, and bad flags.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include <nlohmann/json.hpp>

#include "test_support.hpp"

namespace {

using harness::test::run_command;

const std::string kExe = HARNESS_EXE;

TEST(Gbench, WritesGoogleBenchmarkJsonWithTheFieldsToolsRead) {
  const std::string out = harness::test::temp_path("gbench.json");
  const auto r = run_command(kExe + " gbench tests/data/suites/tiny.yaml --variants cpu --benchmark_min_time=0.01 "
                                    "--benchmark_repetitions=2 --benchmark_format=json --benchmark_out=" + out);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto j = nlohmann::json::parse(harness::test::read_file(out));
  // context: what compare.py and the dashboards read.
  const auto& ctx = j.at("context");
  EXPECT_TRUE(ctx.at("date").is_string());
  EXPECT_TRUE(ctx.at("host_name").is_string());
  EXPECT_GE(ctx.at("num_cpus").get<int>(), 1);
  ASSERT_TRUE(ctx.at("caches").is_array());
  EXPECT_EQ(ctx.at("harness_suite"), "tiny");
  EXPECT_TRUE(ctx.contains("library_build_type"));
  // benchmarks: every passing result, named as the harness names it, with its repetitions
  // and the mean/median/stddev aggregates Google Benchmark computes.
  const auto& b = j.at("benchmarks");
  ASSERT_FALSE(b.empty());
  int iterations = 0, aggregates = 0;
  for (const auto& e : b) {
    EXPECT_EQ(e.at("name").get<std::string>().rfind("stream/cpu/", 0), 0u) << e.dump();
    EXPECT_TRUE(e.at("run_name").is_string());
    EXPECT_EQ(e.at("time_unit"), "us");
    EXPECT_TRUE(e.at("real_time").is_number());
    EXPECT_TRUE(e.at("cpu_time").is_number());
    EXPECT_GT(e.at("iterations").get<long long>(), 0);
    if (e.at("run_type") == "iteration") {
      ++iterations;
      EXPECT_GT(e.at("bytes/s").get<double>(), 0) << "bytes/s is a rate counter";
    } else {
      ++aggregates;
      EXPECT_TRUE(e.at("aggregate_name") == "mean" || e.at("aggregate_name") == "median" ||
                  e.at("aggregate_name") == "stddev" || e.at("aggregate_name") == "cv")
          << e.dump();
    }
  }
  EXPECT_GT(iterations, 0);
  EXPECT_GT(aggregates, 0);
  // harness compare reads it.
  const auto c = run_command(kExe + " compare " + out + " " + out);
  EXPECT_EQ(c.exit_code, 0) << c.output;
  EXPECT_NE(c.output.find("no regression"), std::string::npos) << c.output;
  std::remove(out.c_str());
}

TEST(Gbench, CudaVariantsAreCheckedFirstAndSkippedWithTheReasonWithoutADevice) {
  if (harness::test::have_device()) GTEST_SKIP() << "a CUDA device is present";
  const auto r = run_command(kExe + " gbench tests/data/suites/tiny.yaml --benchmark_min_time=0.01");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("gbench: skipped stream/cuda/"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("passed their check and are timed by Google Benchmark"), std::string::npos) << r.output;
}

TEST(Gbench, UnknownFlagsAreExit2BeforeAnyWork) {
  auto r = run_command(kExe + " gbench tests/data/suites/tiny.yaml --benchmark_filtr=x");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("harness: error: gbench: unknown Google Benchmark flag '--benchmark_filtr=x'"), std::string::npos)
      << r.output;
  EXPECT_EQ(r.output.find("passed"), std::string::npos) << r.output;
  r = run_command(kExe + " gbench tests/data/suites/tiny.yaml --frobnicate");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("unknown option '--frobnicate'"), std::string::npos) << r.output;
}

TEST(RunFlags, BadTimingStoppingAndThrottleAreExit2) {
  auto r = run_command(kExe + " run tests/data/suites/tiny.yaml --timing grph --out /tmp/x.json");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("--timing: expected events or graph, got 'grph'; did you mean 'graph'?"), std::string::npos)
      << r.output;
  r = run_command(kExe + " run tests/data/suites/tiny.yaml --stopping entropi --out /tmp/x.json");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("did you mean 'entropy'?"), std::string::npos) << r.output;
  r = run_command(kExe + " run tests/data/suites/tiny.yaml --throttle 1.2 --out /tmp/x.json");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("--throttle: 1.2 is outside (0, 1]"), std::string::npos) << r.output;
}

TEST(RunFlags, TheReportSaysWhichRuleStoppedEachResult) {
  const std::string out = harness::test::temp_path("stopping.json");
  const auto r = run_command(kExe + " run tests/data/suites/tiny.yaml --variants cpu --stopping samples --quiet --out " + out);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto j = nlohmann::json::parse(harness::test::read_file(out));
  for (const auto& res : j.at("results")) {
    EXPECT_EQ(res.at("stats").at("stopping_rule"), "samples");
    EXPECT_EQ(res.at("stats").at("stop_reason"), "sample count reached");
    EXPECT_EQ(res.at("stats").at("count"), res.at("settings").at("stopping").at("samples"));
    EXPECT_EQ(res.at("stats").at("timing_mode"), "host");
  }
  std::remove(out.c_str());
  std::remove((out + ".journal.jsonl").c_str());
}

}  // namespace
