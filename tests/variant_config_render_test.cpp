// A result's "config" (Variant::config, see variant_config_test.cpp) in the tables of
// `harness report`: the markdown and HTML note column shows it; results without it do not.
#include <gtest/gtest.h>

#include <string>

#include <nlohmann/json.hpp>

#include "report/report_model.hpp"
#include "render/report_render.hpp"
#include "test_support.hpp"

namespace {

using namespace harness;
using nlohmann::json;

// The committed gemm fixture with a config added to its first result.
json fixture_with_config() {
  json report = json::parse(test::read_file(std::string(HARNESS_SOURCE_DIR) + "/tests/data/reports/gemm_base.json"));
  report["results"][0]["config"] = "splitk tile=128x64 splits=8";
  return report;
}

TEST(VariantConfigRender, MarkdownAndHtmlShowTheConfig) {
  const Report report = decode_report(fixture_with_config(), "config.json");
  ASSERT_FALSE(report.results.empty());
  EXPECT_EQ(report.results[0].config, "splitk tile=128x64 splits=8");
  EXPECT_NE(render_report_markdown(report).find("config: splitk tile=128x64 splits=8"), std::string::npos);
  EXPECT_NE(render_report_html(report).find("config: splitk tile=128x64 splits=8"), std::string::npos);
}

TEST(VariantConfigRender, NoConfigNoNote) {
  json report = fixture_with_config();
  report["results"][0].erase("config");
  EXPECT_EQ(render_report_markdown(decode_report(report, "plain.json")).find("config:"), std::string::npos);
}

}  // namespace
