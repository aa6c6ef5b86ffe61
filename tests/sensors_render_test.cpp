// The report pages with NVML's figures (issue 33): md and html columns where a table has
// sensors, the CSV's columns always, the environment's line.
#include <gtest/gtest.h>

#include "render/report_render.hpp"
#include "report/report.hpp"
#include "report/report_model.hpp"
#include "sensors_test_support.hpp"

namespace harness {
namespace {

Result timed_result_with_sensors() {
  Result r = test::result_with_sensors();
  r.energy_per_launch_j = 0.14;  // 700 W x 200 us
  r.flop_per_j = r.work.flops / r.energy_per_launch_j;
  r.cycles_per_launch = 200e-6 * 1470e6;
  return r;
}

nlohmann::json report_with(const std::vector<Result>& results) {
  Suite suite;
  suite.name = "s";
  const nlohmann::json env = {{"gpu", nullptr},      {"cuda_driver", "13.0"}, {"cuda_runtime", "13.0"},
                              {"host", "h"},         {"harness_version", "0"}, {"git_commit", "x"},
                              {"date", "d"},         {"command_line", "c"},
                              {"nvml", {{"used", false}, {"note", "NVML: not built (nvml.h not found at build time)"}}}};
  return make_report(env, suite, results);
}

TEST(SensorPages, MarkdownAndHtmlColumnsWhereATableHasSensors) {
  const Report with = decode_report(report_with({timed_result_with_sensors()}), "r.json");
  const std::string md = render_report_markdown(with);
  EXPECT_NE(md.find("| SM clock MHz | power W | energy/launch | GFLOP/J |"), std::string::npos) << md;
  EXPECT_NE(md.find("| 1470 (74%) | 698 | 140.00 mJ |"), std::string::npos) << md;
  EXPECT_NE(md.find("sw_power_cap; steady after 1.4 s at 1470 MHz; burst 160.00 us at 1980 MHz"), std::string::npos) << md;
  EXPECT_NE(md.find("| Sensors | NVML: not built (nvml.h not found at build time) |"), std::string::npos) << md;
  const std::string html = render_report_html(with);
  EXPECT_NE(html.find("<th>SM clock MHz</th>"), std::string::npos);
  EXPECT_NE(html.find("<td class=\"num\">1470 (74%)</td>"), std::string::npos);
  // A table without sensors (older reports, CPU results) keeps its columns as they were.
  Result plain = timed_result_with_sensors();
  plain.timing->sensors.reset();
  plain.timing->steady.reset();
  const std::string md_plain = render_report_markdown(decode_report(report_with({plain}), "r.json"));
  EXPECT_EQ(md_plain.find("SM clock MHz"), std::string::npos);
}

TEST(SensorPages, CsvHasTheSensorColumnsAlways) {
  const std::string csv = render_report_csv(decode_report(report_with({timed_result_with_sensors()}), "r.json"));
  const std::string head = csv.substr(0, csv.find('\n'));
  EXPECT_NE(head.find(",sm_clock_min_mhz,sm_clock_median_mhz,sm_clock_max_mhz,power_median_w,temperature_max_c,"
                      "throttle_reasons,energy_per_launch_j,flop_per_j,cycles_per_launch,steady_reached,burst_median_s"),
            std::string::npos) << head;
  const std::string row = csv.substr(csv.find('\n') + 1);
  EXPECT_NE(row.find(",1455,1470,1500,"), std::string::npos) << row;
  EXPECT_NE(row.find(",sw_power_cap,"), std::string::npos) << row;
  EXPECT_NE(row.find(",true,0.00016"), std::string::npos) << row;
}

TEST(SensorPages, TheReportWarnsOfResultsWhoseClockFell) {
  const Report r = decode_report(report_with({timed_result_with_sensors()}), "capped.json");
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_EQ(r.warnings[0],
            "capped.json: 1 result(s) ran with the SM clock fallen (NVML: median under 95% of the maximum, or sw_power_cap)");
  Result held = timed_result_with_sensors();
  held.timing->sensors->sm_mhz_median = 1970;
  held.timing->sensors->reasons.clear();
  EXPECT_TRUE(decode_report(report_with({held}), "held.json").warnings.empty());
}

}  // namespace
}  // namespace harness
