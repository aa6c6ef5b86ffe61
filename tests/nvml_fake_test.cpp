// measure/nvml_sensors.cpp against a fake libnvidia-ml.so.1 (tests/fake_nvml): the dlopen
// path, the functions resolved by name, the readings as NVML's units give them (mW, MHz,
// mJ), the sampler and summary on top, and a bus id NVML does not know. Built where
// nvml.h was found (the NVML build); the real library is never touched here.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <thread>

#include "measure/nvml_sensors.hpp"

namespace harness {
namespace {

// Before anything opens NVML: the library is loaded once per process.
const bool kFakeLibrary = [] { return ::setenv("HARNESS_NVML_LIBRARY", HARNESS_FAKE_NVML, 1) == 0; }();

TEST(NvmlFake, ReadingsInTheHarnesssUnits) {
  ASSERT_TRUE(kFakeLibrary);
  ASSERT_TRUE(nvml_built());
  NvmlOpen n = open_nvml_at("0000:01:00.0");
  ASSERT_NE(n.source, nullptr) << n.note;
  EXPECT_TRUE(n.note.empty());
  SensorSample s;
  ASSERT_TRUE(n.source->read(s));
  EXPECT_DOUBLE_EQ(s.sm_mhz, 1470);
  EXPECT_DOUBLE_EQ(s.power_w, 698);  // from milliwatts
  EXPECT_DOUBLE_EQ(s.temp_c, 61);
  EXPECT_TRUE(s.has_reasons);
  EXPECT_EQ(reason_names(s.reasons), std::vector<std::string>{"sw_power_cap"});
  EXPECT_DOUBLE_EQ(n.source->max_sm_mhz(), 1980);
  const auto e0 = n.source->energy_mj();
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  const auto e1 = n.source->energy_mj();
  ASSERT_TRUE(e0 && e1);
  EXPECT_GT(*e1 - *e0, 700 * 0.04 * 1e3);  // mJ: 700 W for 50 ms is 35 J
}

TEST(NvmlFake, TheSamplerAndSummaryOnTop) {
  NvmlOpen n = open_nvml_at("0000:01:00.0");
  ASSERT_NE(n.source, nullptr) << n.note;
  SensorSampler sampler(*n.source, 0.002);
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  sampler.stop();
  const SensorStats s = summarize_sensors(sampler.since(0), n.source->max_sm_mhz(), sampler.period());
  EXPECT_GE(s.samples, 3u);
  EXPECT_TRUE(s.clock_fell());
  EXPECT_EQ(clock_text(s), "clock 1470 MHz (74% of 1980), power 698 W, sw_power_cap");
}

TEST(NvmlFake, AnUnknownDeviceIsANoteNotAFailure) {
  const NvmlOpen n = open_nvml_at("0000:99:00.0");
  EXPECT_EQ(n.source, nullptr);
  EXPECT_EQ(n.note, "NVML: no device at PCI bus id 0000:99:00.0 (Not Found)");
}

TEST(NvmlFake, HarnessNvml0StillWins) {
  ::setenv("HARNESS_NVML", "0", 1);
  const NvmlOpen n = open_nvml_at("0000:01:00.0");
  ::unsetenv("HARNESS_NVML");
  EXPECT_EQ(n.source, nullptr);
  EXPECT_EQ(n.note, "NVML: off (HARNESS_NVML=0)");
}

}  // namespace
}  // namespace harness
