// interleave: true (measure/interleave.hpp, run/runner_interleave.cpp): a case's variants
// timed in rounds, one batch of each per round; one variant left to time is plain timing;
// the report records it per result.
#include <gtest/gtest.h>

#include <string>

#include "harness/error.hpp"
#include "harness/registry.hpp"
#include "measure/interleave.hpp"
#include "report/report.hpp"
#include "run/runner.hpp"
#include "suite/suite.hpp"
#include "types/environment.hpp"

namespace {

using namespace harness;

TEST(Interleave, RoundsStepEachUnfinishedResultOnceInOrder) {
  // Results finishing after 2, 4 and 3 batches: 0 1 2 | 0 1 2 | 1 2 | 1.
  const std::vector<std::size_t> needs = {2, 4, 3};
  std::vector<std::size_t> taken(3, 0);
  std::string order;
  const auto rounds = run_in_rounds(3, [&](std::size_t i) {
    order += static_cast<char>('0' + i);
    return ++taken[i] == needs[i];
  });
  EXPECT_EQ(order, "012012121");
  EXPECT_EQ(rounds, needs);
  EXPECT_TRUE(run_in_rounds(0, [](std::size_t) { return true; }).empty());
}

// Every launch of the two test variants appends its letter: the order the runner ran them.
std::string& launch_log() {
  static std::string log;
  return log;
}

void register_logging_variants() {
  static const bool added = [] {
    const Variant* cpu = Registry::instance().find_variant("stream", "cpu");
    for (const char* name : {"ilv_a", "ilv_b"}) {
      const char letter = name[4];
      auto launch = cpu->launch;
      Registry::instance().add_variant(make_variant("stream", name, Backend::cpu, [launch, letter](LaunchContext& ctx) {
                                         launch_log() += letter;
                                         launch(ctx);
                                       }).description("test: stream/cpu that logs its launches"));
    }
    return true;
  }();
  (void)added;
}

std::vector<Result> run_suite(const std::string& interleave, const std::vector<std::string>& variants) {
  register_logging_variants();
  const Suite suite = parse_suite(R"(
suite: interleave
settings: {warmup: 1, min_samples: 1, min_time: 0.0, max_time: 10, noise: 1.0, cache: hot,
           stopping: {rule: samples, samples: 6}, interleave: )" + interleave + R"(}
cases:
  - problem: stream
    params: {op: copy, n: 1000}
)",
                                  "interleave.yaml", Registry::instance());
  RunOptions options;
  options.suite_name = suite.name;
  options.profile = false;
  options.variants = variants;
  Runner runner(options, probe_device(0));
  launch_log().clear();
  return runner.run(plan(suite, options), {});
}

TEST(Interleave, TheVariantsOfACaseAreTimedInRounds) {
  const auto results = run_suite("true", {"ilv_a", "ilv_b"});
  ASSERT_EQ(results.size(), 2u);
  for (const auto& r : results) {
    ASSERT_EQ(r.status, Status::passed) << r.name << ": " << r.reason;
    ASSERT_TRUE(r.timing);
    EXPECT_TRUE(r.timing->interleaved);
    EXPECT_EQ(r.timing->rounds, 6u);  // host timing: one sample per batch, 6 samples
    EXPECT_EQ(r.timing->samples.size(), 6u);
  }
  // Each checked and warmed up (a a, b b), then the six rounds a b, then each re-checked
  // on fresh inputs (a, b).
  EXPECT_EQ(launch_log(), "aabb" "abababababab" "ab");
  // The report says so per result; the reader gets it back.
  Suite suite;
  suite.name = "interleave";
  const auto json = make_report({{"date", "x"}, {"host", "h"}}, suite, results);
  EXPECT_EQ(json["results"][0]["stats"]["interleaved"], true);
  EXPECT_EQ(json["results"][0]["stats"]["interleave_rounds"], 6);
  EXPECT_EQ(json["results"][0]["settings"]["interleave"], true);
  const Result back = result_from_json(json["results"][1]);
  EXPECT_TRUE(back.timing->interleaved);
  EXPECT_EQ(back.timing->rounds, 6u);
  EXPECT_EQ(back.settings.interleave, true);
}

TEST(Interleave, OffOrWithOneVariantItIsPlainTiming) {
  auto results = run_suite("false", {"ilv_a", "ilv_b"});
  ASSERT_EQ(results.size(), 2u);
  EXPECT_FALSE(results[0].timing->interleaved);
  // Each variant whole, one after the other: check, warm-up, 6 samples, re-check.
  EXPECT_EQ(launch_log(), "aaaaaaaaa" "bbbbbbbbb");
  results = run_suite("true", {"ilv_a"});
  ASSERT_EQ(results.size(), 1u);
  ASSERT_EQ(results[0].status, Status::passed) << results[0].reason;
  EXPECT_FALSE(results[0].timing->interleaved);
  EXPECT_EQ(results[0].timing->rounds, 0u);
  EXPECT_EQ(launch_log(), "aaaaaaaaa");
  Suite suite;
  suite.name = "interleave";
  EXPECT_EQ(make_report({{"date", "x"}, {"host", "h"}}, suite, results)["results"][0]["stats"]["interleaved"], false);
}

TEST(Interleave, TheSettingIsTrueOrFalse) {
  try {
    parse_suite("suite: s\nsettings: {interleave: sometimes}\ncases:\n  - problem: stream\n", "s.yaml",
                Registry::instance());
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("'interleave' must be true or false, got 'sometimes'"), std::string::npos)
        << e.what();
  }
  const Suite s = parse_suite("suite: s\ncases:\n  - problem: stream\n    settings: {interleave: true}\n", "s.yaml",
                              Registry::instance());
  ASSERT_FALSE(s.cases.empty());
  EXPECT_EQ(s.cases[0].settings.interleave, true);
}

// The default follows steady's rule: on for tensor-core dtypes (the power-capped work
// where timing the variants one after the other moved their ratios), off otherwise; a
// suite's or a case's setting wins.
TEST(Interleave, OnByDefaultForTensorCoreDtypesOnly) {
  const Suite s = parse_suite(R"(
suite: demo
cases:
  - problem: gemm
    params: {M: 64, N: 64, K: 64, dtype: [f32, tf32, bf16, f16]}
    variants: [naive]
  - problem: gemm
    params: {M: 64, N: 64, K: 64, dtype: bf16}
    settings: {interleave: false}
    variants: [naive]
  - problem: stream
    variants: [cpu]
)", "s.yaml", Registry::instance());
  ASSERT_EQ(s.cases.size(), 6u);
  EXPECT_EQ(s.cases[0].settings.interleave, false);  // f32: CUDA cores
  EXPECT_EQ(s.cases[1].settings.interleave, true);
  EXPECT_EQ(s.cases[2].settings.interleave, true);
  EXPECT_EQ(s.cases[3].settings.interleave, true);
  EXPECT_EQ(s.cases[4].settings.interleave, false);  // the case said so
  EXPECT_EQ(s.cases[5].settings.interleave, false);  // no dtype
  EXPECT_FALSE(s.settings.interleave.has_value());   // the suite's: unset, the rule decides
}

}  // namespace
