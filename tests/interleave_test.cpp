// interleave: true (measure/interleave.hpp, run/runner_interleave.cpp): a case's variants
// timed in rounds, one batch of each per round; one variant left to time is plain timing;
// the report records it per result.
#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
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

// Shuffled: every round still steps each unfinished result exactly once (round r holds
// the results that need more than r batches), the counts are the same as in plan order,
// the orders change from round to round, and the same seed gives the same orders.
TEST(Interleave, ShuffledRoundsArePermutationsOfTheUnfinishedResultsAndRepeatWithTheSeed) {
  const std::vector<std::size_t> needs = {5, 8, 3, 8};
  auto log_of = [&](std::optional<std::uint64_t> seed, std::vector<std::size_t>* counts) {
    std::vector<std::size_t> taken(needs.size(), 0);
    std::string log;
    *counts = run_in_rounds(
        needs.size(),
        [&](std::size_t i) {
          log += static_cast<char>('0' + i);
          return ++taken[i] == needs[i];
        },
        seed);
    return log;
  };
  std::vector<std::size_t> counts;
  const std::string log = log_of(7, &counts);
  EXPECT_EQ(counts, needs);
  std::vector<std::string> rounds;
  std::size_t at = 0;
  for (std::size_t r = 0; r < 8; ++r) {
    std::string expected;  // the results still running in round r, in plan order
    for (std::size_t i = 0; i < needs.size(); ++i)
      if (needs[i] > r) expected += static_cast<char>('0' + i);
    ASSERT_LE(at + expected.size(), log.size()) << log;
    std::string round = log.substr(at, expected.size());
    at += expected.size();
    rounds.push_back(round);
    std::sort(round.begin(), round.end());
    EXPECT_EQ(round, expected) << "round " << r << " of " << log;
  }
  EXPECT_EQ(at, log.size()) << log;
  EXPECT_NE(rounds[0], rounds[1]) << log;  // a fresh order per round (seed 7: 1203, then 3120, ...)
  EXPECT_NE(log, "012301230120130131313131");  // not plan order
  std::vector<std::size_t> again;
  EXPECT_EQ(log_of(7, &again), log);
  EXPECT_NE(log_of(8, &again), log);
  EXPECT_EQ(log_of(std::nullopt, &again), "0123" "0123" "0123" "013" "013" "13" "13" "13");
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

std::vector<Result> run_suite(const std::string& interleave, const std::vector<std::string>& variants,
                              const std::string& order = "fixed") {
  register_logging_variants();
  const Suite suite = parse_suite(R"(
suite: interleave
settings: {warmup: 1, min_samples: 1, min_time: 0.0, max_time: 10, noise: 1.0, cache: hot,
           stopping: {rule: samples, samples: 6}, interleave: )" + interleave +
                                      ", interleave_order: " + order + R"(}
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
  EXPECT_EQ(json["results"][0]["settings"]["interleave_order"], "fixed");
  EXPECT_EQ(back.settings.round_order, RoundOrder::fixed);
}

// The default order: each of the six rounds takes a and b in a seeded order of its own.
TEST(Interleave, ByDefaultEachRoundTakesTheVariantsInAShuffledOrder) {
  const auto results = run_suite("true", {"ilv_a", "ilv_b"}, "shuffled");
  ASSERT_EQ(results.size(), 2u);
  for (const auto& r : results) ASSERT_EQ(r.status, Status::passed) << r.name << ": " << r.reason;
  const std::string log = launch_log();
  ASSERT_EQ(log.size(), 4u + 12u + 2u) << log;
  EXPECT_EQ(log.substr(0, 4), "aabb");
  EXPECT_EQ(log.substr(16), "ab");
  const std::string timed = log.substr(4, 12);
  for (std::size_t r = 0; r < 6; ++r) {
    const std::string round = timed.substr(2 * r, 2);
    EXPECT_TRUE(round == "ab" || round == "ba") << timed;
  }
  EXPECT_NE(timed, "abababababab");  // this case's seed (run seed 42) gives another order
  Suite suite;
  suite.name = "interleave";
  EXPECT_EQ(make_report({{"date", "x"}, {"host", "h"}}, suite, results)["results"][0]["settings"]["interleave_order"],
            "shuffled");
  // The same seed, the same orders.
  run_suite("true", {"ilv_a", "ilv_b"}, "shuffled");
  EXPECT_EQ(launch_log(), log);
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
  EXPECT_EQ(s.cases[0].settings.round_order, RoundOrder::shuffled);  // the default
  try {
    parse_suite("suite: s\nsettings: {interleave_order: random}\ncases:\n  - problem: stream\n", "s.yaml",
                Registry::instance());
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("'interleave_order' must be shuffled or fixed, got 'random'"),
              std::string::npos)
        << e.what();
  }
  EXPECT_EQ(parse_suite("suite: s\ncases:\n  - problem: stream\n    settings: {interleave_order: fixed}\n", "s.yaml",
                        Registry::instance())
                .cases[0]
                .settings.round_order,
            RoundOrder::fixed);
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
