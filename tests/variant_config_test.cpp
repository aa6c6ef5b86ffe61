// Variant::config: the configuration a variant chooses is recorded in each result, written
// as "config" in the JSON report, read back, and shown in the markdown table's note; a
// variant without one writes no "config" key (reports stay as they were).
// (report_model.hpp and runner.hpp cannot share a translation unit: the rendering half
// is in variant_config_render_test.cpp.)
#include <gtest/gtest.h>

#include <string>

#include "harness/registry.hpp"
#include "report/report.hpp"
#include "types/environment.hpp"
#include "run/runner.hpp"
#include "suite/suite.hpp"

namespace {

using namespace harness;

// Registered once: the built-in stream cpu variant under another name, with a config
// function of the parameters (so the test sees it evaluated per case, not a constant).
const Variant& configured_variant() {
  static const bool added = [] {
    const Variant* cpu = Registry::instance().find_variant("stream", "cpu");
    Registry::instance().add_variant(make_variant("stream", "cpu_configured", Backend::cpu, cpu->launch)
                                         .description("test: stream/cpu with a config")
                                         .config([](const Params& p) { return "chunk=" + std::to_string(p.get_int("n") / 4); }));
    return true;
  }();
  (void)added;
  return *Registry::instance().find_variant("stream", "cpu_configured");
}

std::vector<Result> run_variants(const std::vector<std::string>& variants) {
  const Suite suite = parse_suite(R"(
suite: config
settings: {warmup: 0, min_samples: 1, min_time: 0.0, max_time: 0.01, noise: 1.0, cache: hot}
cases:
  - problem: stream
    params: {op: copy, n: [1000, 2000]}
)", "config.yaml", Registry::instance());
  RunOptions options;
  options.suite_name = suite.name;
  options.profile = false;
  options.variants = variants;
  Runner runner(options, probe_device(0));
  return runner.run(plan(suite, options), {});
}

TEST(VariantConfig, IsRecordedPerResultAndInTheReportJson) {
  ASSERT_TRUE(static_cast<bool>(configured_variant().config));
  const auto results = run_variants({"cpu_configured"});
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(results[0].status, Status::passed) << results[0].reason;
  EXPECT_EQ(results[0].config, "chunk=250");
  EXPECT_EQ(results[1].config, "chunk=500");

  Suite suite;
  suite.name = "config";
  const auto json = make_report({{"date", "x"}, {"host", "h"}}, suite, results);
  ASSERT_EQ(json["results"].size(), 2u);
  EXPECT_EQ(json["results"][0]["config"], "chunk=250");
  EXPECT_EQ(json["results"][1]["config"], "chunk=500");
  // Read back as `harness report` reads it (variant_config_render_test.cpp renders it).
  EXPECT_EQ(result_from_json(json["results"][1]).config, "chunk=500");
}

TEST(VariantConfig, AVariantWithoutOneWritesNoConfigKey) {
  const auto results = run_variants({"cpu"});
  ASSERT_EQ(results.size(), 2u);
  EXPECT_TRUE(results[0].config.empty());
  Suite suite;
  suite.name = "config";
  const auto json = make_report({{"date", "x"}, {"host", "h"}}, suite, results);
  EXPECT_FALSE(json["results"][0].contains("config"));
}

}  // namespace
