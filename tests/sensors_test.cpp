// NVML sensors per result (issue 33), on fake readings: the reason names, the summary of
// a result's samples, the sampler thread, energy and cycles per launch, the report's
// fields and schema, the console's line, and the note of a build without nvml.h.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>

#include "measure/nvml_sensors.hpp"
#include "measure/sensors.hpp"
#include "measure/stats.hpp"
#include "report/report.hpp"
#include "report/schema_validate.hpp"
#include "run/console.hpp"
#include "run/runner.hpp"
#include "sensors_test_support.hpp"

namespace harness {
namespace {

using test::capped_samples;
using test::sample;

TEST(SensorReasons, NamesFollowNvmlsBitsAndLeaveIdleOut) {
  EXPECT_EQ(reason_names(0x4 | 0x1), std::vector<std::string>{"sw_power_cap"});
  EXPECT_EQ(reason_names(0x8 | 0x20 | 0x40 | 0x80),
            (std::vector<std::string>{"hw_slowdown", "sw_thermal", "hw_thermal", "hw_power_brake"}));
  EXPECT_TRUE(reason_names(0).empty());
  EXPECT_TRUE(is_limiting_reason("sw_power_cap"));
  EXPECT_FALSE(is_limiting_reason("sync_boost"));
}

TEST(SensorSummary, MinMedianMaxReasonsAndTemperature) {
  const SensorStats s = summarize_sensors(capped_samples(), 1980, 0.002);
  EXPECT_EQ(s.samples, 4u);
  EXPECT_DOUBLE_EQ(s.sm_mhz_min, 1455);
  EXPECT_DOUBLE_EQ(s.sm_mhz_median, 1470);
  EXPECT_DOUBLE_EQ(s.sm_mhz_max, 1500);
  EXPECT_DOUBLE_EQ(s.power_w_min, 690);
  EXPECT_DOUBLE_EQ(s.power_w_max, 701);
  EXPECT_DOUBLE_EQ(s.temp_c_max, 57);
  EXPECT_EQ(s.reasons, std::vector<std::string>{"sw_power_cap"});
  EXPECT_EQ(s.reason_samples.at("sw_power_cap"), 3u);
  EXPECT_TRUE(s.clock_fell());
  EXPECT_EQ(clock_text(s), "clock 1470 MHz (74% of 1980), power 698 W, sw_power_cap");
}

TEST(SensorSummary, ClockFellOnlyBelow95PercentOrWithALimit) {
  SensorStats s;
  s.sm_mhz_limit = 1980;
  s.sm_mhz_median = 1950;  // 98.5%
  EXPECT_FALSE(s.clock_fell());
  s.reasons = {"sync_boost"};
  EXPECT_FALSE(s.clock_fell());
  s.reasons = {"hw_thermal"};
  EXPECT_TRUE(s.clock_fell());
  s.reasons.clear();
  s.sm_mhz_median = 1870;  // 94.4%
  EXPECT_TRUE(s.clock_fell());
}

TEST(SensorSummary, UnreadFieldsStayOutOfTheFigures) {
  std::vector<SensorSample> v = {sample(0, 1980, 0, 0, 0), sample(0.1, 0, 300, 40, 0)};
  v[0].has_reasons = v[1].has_reasons = false;
  const SensorStats s = summarize_sensors(v, 0, 0.002);
  EXPECT_DOUBLE_EQ(s.sm_mhz_min, 1980);  // the 0 of the second reading is "not read"
  EXPECT_DOUBLE_EQ(s.power_w_min, 300);
  EXPECT_FALSE(s.clock_fell());          // no limit known, no reasons
  EXPECT_EQ(clock_text(s), "clock 1980 MHz, power 300 W");
}

TEST(SensorEnergy, PowerSamplesIntegrateAndMeanPowerPrefersTheCounter) {
  std::vector<SensorSample> v;
  for (int i = 0; i <= 10; ++i) v.push_back(sample(i * 0.1, 1500, 100, 50, 0));
  ASSERT_TRUE(integrate_power_j(v));
  EXPECT_NEAR(*integrate_power_j(v), 100.0, 1e-9);  // 100 W for 1 s
  EXPECT_FALSE(integrate_power_j({v[0]}));
  SensorStats s = summarize_sensors(v, 1980, 0.1);
  EXPECT_DOUBLE_EQ(*s.mean_power_w(), 100);  // no counter: the median sample
  s.energy_j = 350;
  s.seconds = 0.5;
  EXPECT_DOUBLE_EQ(*s.mean_power_w(), 700);  // the counter over the region wins
}

// A source whose readings the test decides; counts its calls.
class FakeSource final : public SensorSource {
 public:
  bool read(SensorSample& out) override {
    ++reads;
    out.sm_mhz = 1500;
    out.power_w = 650;
    out.reasons = 0x4;
    out.has_reasons = true;
    return !refuse;
  }
  std::optional<double> energy_mj() override { return std::nullopt; }
  double max_sm_mhz() override { return 1980; }
  std::atomic<int> reads{0};
  bool refuse = false;
};

TEST(SensorSampler, ReadsOnItsOwnThreadUntilStopped) {
  FakeSource source;
  SensorSampler sampler(source, 0.002);
  std::this_thread::sleep_for(std::chrono::milliseconds(40));
  const double mid = sampler.now();
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  sampler.stop();
  const auto all = sampler.since(0);
  ASSERT_GE(all.size(), 5u);  // ~30 at 2 ms; a loaded machine gives fewer
  for (std::size_t i = 1; i < all.size(); ++i) EXPECT_GT(all[i].t_s, all[i - 1].t_s);
  const auto later = sampler.since(mid);
  EXPECT_LT(later.size(), all.size());
  for (const auto& s : later) EXPECT_GE(s.t_s, mid);
  const int reads = source.reads;
  std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_EQ(source.reads, reads);  // stopped: no more readings
}

TEST(SensorSampler, ARefusedReadingIsNotASample) {
  FakeSource source;
  source.refuse = true;
  SensorSampler sampler(source, 0.002);
  std::this_thread::sleep_for(std::chrono::milliseconds(10));
  sampler.stop();
  EXPECT_GT(source.reads, 0);
  EXPECT_TRUE(sampler.since(0).empty());
}

Result timed_result_with_sensors() {
  Result r = test::result_with_sensors();
  derive_rates(r);
  return r;
}

TEST(SensorRates, EnergyFlopPerJouleAndCyclesPerLaunch) {
  const Result r = timed_result_with_sensors();
  EXPECT_NEAR(r.energy_per_launch_j, 700 * 200e-6, 1e-12);  // mean power x median time
  EXPECT_NEAR(r.flop_per_j, r.work.flops / (700 * 200e-6), 1);
  EXPECT_NEAR(r.cycles_per_launch, 200e-6 * 1470e6, 1e-3);  // median time x NVML's median clock
  // Without sensors: the probe's clock gives the cycles, nothing gives energy.
  Result p = r;
  p.timing->sensors.reset();
  p.timing->clocks = ClockStats{};
  p.timing->clocks->median_mhz = 1500;
  p.energy_per_launch_j = p.flop_per_j = 0;
  derive_rates(p);
  EXPECT_NEAR(p.cycles_per_launch, 200e-6 * 1500e6, 1e-3);
  EXPECT_EQ(p.energy_per_launch_j, 0);
}

TEST(SensorReport, FieldsRoundTripAndValidate) {
  const Result r = timed_result_with_sensors();
  const nlohmann::json j = result_to_json(r);
  ASSERT_TRUE(j.contains("sensors"));
  EXPECT_EQ(j["sensors"]["sm_clock_mhz"]["median"], 1470);
  EXPECT_EQ(j["sensors"]["sm_clock_mhz"]["limit"], 1980);
  EXPECT_EQ(j["sensors"]["power_w"]["max"], 701);
  EXPECT_EQ(j["sensors"]["temperature_c_max"], 57);
  EXPECT_EQ(j["sensors"]["throttle_reasons"], nlohmann::json::array({"sw_power_cap"}));
  EXPECT_EQ(j["sensors"]["energy_source"], "counter");
  EXPECT_EQ(j["sensors"]["clock_fell"], true);
  EXPECT_EQ(j["steady"]["reached"], true);
  EXPECT_DOUBLE_EQ(j["steady"]["burst_median_s"].get<double>(), 160e-6);
  EXPECT_NEAR(j["rates"]["energy_per_launch_j"].get<double>(), 0.14, 1e-12);
  EXPECT_GT(j["rates"]["flop_per_j"].get<double>(), 0);
  EXPECT_GT(j["rates"]["cycles_per_launch"].get<double>(), 0);

  const Result back = result_from_json(j);
  ASSERT_TRUE(back.timing && back.timing->sensors && back.timing->steady);
  EXPECT_DOUBLE_EQ(back.timing->sensors->sm_mhz_median, 1470);
  EXPECT_EQ(back.timing->sensors->reasons, std::vector<std::string>{"sw_power_cap"});
  EXPECT_EQ(back.timing->sensors->reason_samples.at("sw_power_cap"), 3u);
  EXPECT_DOUBLE_EQ(*back.timing->sensors->energy_j, 70.0);
  EXPECT_TRUE(back.timing->steady->reached);
  EXPECT_DOUBLE_EQ(back.energy_per_launch_j, r.energy_per_launch_j);

  Suite suite;
  suite.name = "s";
  nlohmann::json env = {{"gpu", nullptr},      {"cuda_driver", "13.0"}, {"cuda_runtime", "13.0"},
                        {"host", "h"},         {"harness_version", "0"}, {"git_commit", "x"},
                        {"date", "d"},         {"command_line", "c"},
                        {"nvml", {{"used", true}, {"note", ""}}}};
  nlohmann::json report = make_report(env, suite, {r});
  const SchemaValidator validator(embedded_report_schema());
  EXPECT_TRUE(validator.validate(report).empty()) << format_issue(validator.validate(report).front());
  // The schema holds the new fields to their types.
  report["results"][0]["sensors"]["throttle_reasons"] = {"sw_power_kap"};
  report["results"][0]["steady"]["seconds"] = -1;
  report["environment"]["nvml"]["used"] = "yes";
  const auto issues = validator.validate(report);
  ASSERT_EQ(issues.size(), 3u);
}

TEST(SensorReport, AResultWithoutSensorsWritesNoneOfTheirFields) {
  Result r = timed_result_with_sensors();
  r.timing->sensors.reset();
  r.timing->steady.reset();
  r.timing->clocks.reset();
  r.energy_per_launch_j = r.flop_per_j = r.cycles_per_launch = 0;
  const nlohmann::json j = result_to_json(r);
  EXPECT_FALSE(j.contains("sensors"));
  EXPECT_FALSE(j.contains("steady"));
  EXPECT_FALSE(j["rates"].contains("energy_per_launch_j"));
  EXPECT_FALSE(j["rates"].contains("cycles_per_launch"));
}

std::string console_output(const Result& r) {
  std::FILE* f = std::tmpfile();
  Console console(f, false);
  console.result(r, 1, 1);
  std::rewind(f);
  std::string out;
  char buf[512];
  while (std::fgets(buf, sizeof buf, f)) out += buf;
  std::fclose(f);
  return out;
}

TEST(SensorConsole, ALineUnderAResultWhoseClockFell) {
  const Result r = timed_result_with_sensors();
  const std::string out = console_output(r);
  EXPECT_NE(out.find("\n    clock 1470 MHz (74% of 1980), power 698 W, sw_power_cap\n"), std::string::npos) << out;
  EXPECT_NE(out.find("140.00 mJ"), std::string::npos) << out;  // energy per launch beside FLOP/s
  EXPECT_NE(out.find("GFLOP/J"), std::string::npos) << out;
  EXPECT_NE(out.find("    steady after 1.4 s at 1470 MHz; burst 160.00 us at 1980 MHz\n"), std::string::npos) << out;
}

TEST(SensorConsole, NoLineWhileTheClockHeld) {
  Result r = timed_result_with_sensors();
  SensorStats& s = *r.timing->sensors;
  s.sm_mhz_median = 1965;
  s.reasons.clear();
  r.timing->steady.reset();
  const std::string out = console_output(r);
  EXPECT_EQ(out.find("clock "), std::string::npos) << out;
  EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), 1) << out;
}

TEST(NvmlNote, ABuildWithoutTheHeaderSaysSo) {
  const NvmlOpen n = open_nvml(0);
  if (!nvml_built()) {
    EXPECT_EQ(n.source, nullptr);
    EXPECT_EQ(n.note, "NVML: not built (nvml.h not found at build time)");
  } else if (!n.source) {
    // Built with NVML on a machine without its library or device: a reason, never a throw.
    EXPECT_EQ(n.note.rfind("NVML: ", 0), 0u) << n.note;
  }
}

TEST(NvmlNote, HarnessNvml0TurnsItOff) {
  ::setenv("HARNESS_NVML", "0", 1);
  const NvmlOpen n = open_nvml(0);
  ::unsetenv("HARNESS_NVML");
  EXPECT_EQ(n.source, nullptr);
  EXPECT_EQ(n.note, nvml_built() ? "NVML: off (HARNESS_NVML=0)" : "NVML: not built (nvml.h not found at build time)");
}

}  // namespace
}  // namespace harness
