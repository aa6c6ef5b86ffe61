#include <gtest/gtest.h>

#include "harness/error.hpp"
#include "suite/suite.hpp"

namespace harness {
namespace {

Suite parse(const std::string& yaml) { return parse_suite(yaml, "t.yaml", Registry::instance()); }

std::string error_of(const std::string& yaml) {
  try {
    parse(yaml);
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

std::string error_of_file(const std::string& name) {
  const std::string path = std::string("tests/data/suites/") + name;
  try {
    load_suite(path, Registry::instance());
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(Suite, CartesianProductInDeclarationOrder) {
  const Suite s = parse(R"(
suite: demo
cases:
  - problem: stream
    params: {n: [10, 20, 30], op: [copy, triad]}
    variants: [cpu]
)");
  EXPECT_EQ(s.name, "demo");
  ASSERT_EQ(s.cases.size(), 6u);
  // op is declared before n by the problem, so op varies slowest.
  EXPECT_EQ(s.cases[0].params.describe(), "op=copy n=10");
  EXPECT_EQ(s.cases[2].params.describe(), "op=copy n=30");
  EXPECT_EQ(s.cases[3].params.describe(), "op=triad n=10");
  EXPECT_EQ(s.cases[0].variants.size(), 1u);
  EXPECT_EQ(s.cases[0].id(), "stream/op:copy/n:10");
}

TEST(Suite, RangeAndPow2Sweeps) {
  const Suite s = parse(R"(
cases:
  - problem: stream
    params: {n: {range: [5, 20, 5]}}
  - problem: stream
    params: {n: {pow2: [256, 2048]}}
)");
  ASSERT_EQ(s.cases.size(), 8u);
  EXPECT_EQ(s.cases[0].params.get_int("n"), 5);
  EXPECT_EQ(s.cases[3].params.get_int("n"), 20);  // stop is included
  EXPECT_EQ(s.cases[4].params.get_int("n"), 256);
  EXPECT_EQ(s.cases[7].params.get_int("n"), 2048);
  EXPECT_EQ(s.name, "t");  // from the file name when 'suite' is absent
}

TEST(Suite, ListOfParamMapsIsConcatenatedAndDefaultsFillTheRest) {
  const Suite s = parse(R"(
cases:
  - problem: stream
    params: [{n: 1}, {op: copy, n: [2, 3]}]
)");
  ASSERT_EQ(s.cases.size(), 3u);
  EXPECT_EQ(s.cases[0].params.describe(), "op=triad n=1");
  EXPECT_EQ(s.cases[2].params.describe(), "op=copy n=3");
  EXPECT_EQ(s.cases[0].variants.size(), Registry::instance().variants("stream").size());  // all by default
}

TEST(Suite, SettingsCascadeFromSuiteToCase) {
  const Suite s = parse(R"(
settings: {warmup: 7, min_samples: 3, cache: hot, max_time: 9}
cases:
  - problem: stream
  - problem: stream
    settings: {max_time: 0.5, min_time: 0.1}
    tolerance: {abs: 0.5, rel_l2: 0.25}
    reference: cuda
)");
  EXPECT_EQ(s.cases[0].settings.warmup, 7);
  EXPECT_EQ(s.cases[0].settings.cache, CacheMode::hot);
  EXPECT_DOUBLE_EQ(s.cases[0].settings.max_time, 9);
  EXPECT_EQ(s.cases[1].settings.warmup, 7);
  EXPECT_DOUBLE_EQ(s.cases[1].settings.max_time, 0.5);
  ASSERT_TRUE(s.cases[1].tolerance);
  EXPECT_DOUBLE_EQ(s.cases[1].tolerance->abs, 0.5);
  EXPECT_DOUBLE_EQ(s.cases[1].tolerance->rel_l2, 0.25);
  EXPECT_EQ(*s.cases[1].reference, "cuda");
}

struct BadFile {
  const char* file;
  const char* message;  // the whole expected one-line error
};

class SuiteErrors : public ::testing::TestWithParam<BadFile> {};

TEST_P(SuiteErrors, AreLocatedOneLineMessages) {
  const std::string got = error_of_file(GetParam().file);
  EXPECT_EQ(got, std::string("tests/data/suites/") + GetParam().file + ":" + GetParam().message);
  EXPECT_EQ(got.find('\n'), std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(
    BadInputs, SuiteErrors,
    ::testing::Values(
        BadFile{"unknown_key.yaml", "4:5: unknown key 'parmas' in case; did you mean 'params'?"},
        BadFile{"unknown_variant.yaml", "5:21: unknown variant 'cdua' of problem 'stream'; did you mean 'cuda'?"},
        BadFile{"unknown_problem.yaml", "3:14: unknown problem 'straem'; did you mean 'stream'?"},
        BadFile{"wrong_type.yaml", "4:17: 'n' expects an integer, got 'ten'"},
        BadFile{"out_of_range.yaml", "4:17: value 0 of 'n' is out of range: expected integer in [1, 17179869184]"},
        BadFile{"empty_sweep.yaml", "4:25: the range of 'n' is empty: stop 10 < start 100"},
        BadFile{"syntax.yaml", "5:1: YAML syntax error: end of sequence flow not found"},
        BadFile{"bad_enum.yaml", "4:18: 'op' must be one of {copy, scale, add, triad}, got 'tirad'; did you mean 'triad'?"},
        BadFile{"bad_setting.yaml", "2:19: 'cache' must be 'hot' or 'cold', got 'warm'"},
        BadFile{"not_pow2.yaml", "4:25: 100 is not a power of two"},
        BadFile{"no_cases.yaml", "1:1: the suite has no 'cases'"},
        BadFile{"duplicate_key.yaml", "5:33: duplicate key 'n' (each key of a map may appear once)"},
        BadFile{"duplicate_case_key.yaml", "7:5: duplicate key 'variants' (each key of a map may appear once)"},
        BadFile{"bad_name.yaml", "2:8: suite name '../../tmp/escaped' contains '/' or '\\': it names the default report "
                                 "reports/run-<suite>-<time>.json, so it must be a plain name"}),
    [](const ::testing::TestParamInfo<BadFile>& param_info) {
      std::string name = param_info.param.file;
      return name.substr(0, name.find('.'));
    });

TEST(Suite, MissingFileIsAnInputError) {
  const std::string e = error_of_file("does_not_exist.yaml");
  EXPECT_EQ(e, "tests/data/suites/does_not_exist.yaml: cannot open suite file: No such file or directory");
}

TEST(Suite, MoreErrors) {
  EXPECT_EQ(error_of(""), "t.yaml:1:1: the suite is empty");
  EXPECT_EQ(error_of("cases: []"), "t.yaml:1:8: 'cases' must be a non-empty list");
  EXPECT_EQ(error_of("cases:\n  - problem: stream\n    params: {n: []}\n"), "t.yaml:3:17: the sweep of 'n' is empty");
  EXPECT_EQ(error_of("cases:\n  - problem: stream\n    params: {m: 1}\n"),
            "t.yaml:3:14: problem 'stream' has no parameter 'm'; did you mean 'n'?");
  EXPECT_EQ(error_of("cases:\n  - problem: stream\n    variants: [cpu, cpu]\n"),
            "t.yaml:3:21: variant 'cpu' is listed twice");
  EXPECT_EQ(error_of("settings: {min_time: 5, max_time: 1}\ncases:\n  - problem: stream\n"),
            "t.yaml:1:11: max_time (1 s) is shorter than min_time (5 s)");
  EXPECT_EQ(error_of("cases:\n  - problem: stream\n    params: {n: {range: [1, 1000000000]}}\n"),
            "t.yaml:3:25: the range of 'n' has more than 100000 values");
  EXPECT_EQ(error_of("cases:\n  - problem: stream\n    params: {n: {steps: [1, 2]}}\n"),
            "t.yaml:3:18: unknown sweep 'steps' (expected 'range' or 'pow2')");
}


TEST(Suite, TimingStoppingAndThrottleSettings) {
  const Suite s = parse(R"(
settings: {timing: graph, stopping: entropy, throttle: 0.9}
cases:
  - problem: stream
  - problem: stream
    settings: {timing: events, stopping: {rule: samples, samples: 50}}
)");
  EXPECT_EQ(s.cases[0].settings.timing, TimingMode::graph);
  EXPECT_EQ(s.cases[0].settings.stopping.rule, StoppingRule::entropy);
  EXPECT_DOUBLE_EQ(s.cases[0].settings.throttle, 0.9);
  EXPECT_EQ(s.cases[1].settings.timing, TimingMode::events);
  EXPECT_EQ(s.cases[1].settings.stopping.rule, StoppingRule::samples);
  EXPECT_EQ(s.cases[1].settings.stopping.samples, 50);
  EXPECT_DOUBLE_EQ(s.cases[1].settings.throttle, 0.9);
}

TEST(Suite, BadTimingStoppingAndThrottleAreLocatedErrors) {
  EXPECT_EQ(error_of("settings: {timing: grph}\ncases:\n  - problem: stream\n"),
            "t.yaml:1:20: 'timing' must be 'events' or 'graph', got 'grph'; did you mean 'graph'?");
  EXPECT_EQ(error_of("settings: {stopping: entrpy}\ncases:\n  - problem: stream\n"),
            "t.yaml:1:22: unknown stopping rule 'entrpy': expected noise, entropy or samples; did you mean 'entropy'?");
  EXPECT_EQ(error_of("settings: {stopping: {rule: samples, count: 3}}\ncases:\n  - problem: stream\n"),
            "t.yaml:1:38: unknown key 'count' in stopping (expected one of: rule, samples, max_angle, min_r2)");
  EXPECT_EQ(error_of("settings: {throttle: 1.5}\ncases:\n  - problem: stream\n"),
            "t.yaml:1:22: 'throttle' = 1.5 is out of range [0, 1]");
  EXPECT_EQ(error_of("settings: {throttle: 0}\ncases:\n  - problem: stream\n"),
            "t.yaml:1:22: 'throttle' must be in (0, 1]: a share of the maximum SM clock");
}

}  // namespace
}  // namespace harness
