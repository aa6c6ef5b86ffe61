#pragma once
// Fake NVML readings and a result measured under a power cap, shared by the sensor tests
// (sensors_test: the figures; sensors_render_test: the pages).
#include <cstdint>
#include <vector>

#include "measure/sensors.hpp"
#include "measure/stats.hpp"
#include "types/result.hpp"

namespace harness::test {

inline SensorSample sample(double t, double mhz, double watts, double temp, std::uint64_t reasons) {
  SensorSample s;
  s.t_s = t;
  s.sm_mhz = mhz;
  s.power_w = watts;
  s.temp_c = temp;
  s.reasons = reasons;
  s.has_reasons = true;
  return s;
}

// A power-capped H200 as the issue saw it: 1455-1500 MHz of 1980, ~700 W, reason 0x4.
inline std::vector<SensorSample> capped_samples() {
  return {sample(0.000, 1500, 690, 55, 0x4), sample(0.002, 1470, 698, 56, 0x4), sample(0.004, 1455, 701, 57, 0x4 | 0x1),
          sample(0.006, 1470, 699, 57, 0x0)};
}

// A bf16 GEMM result as the H200 ran it: 200 us at 1470 MHz of 1980 under the
// 700 W cap, settled after 1.4 s, 160 us in the burst. Rates are the caller's (derive_rates).
inline Result result_with_sensors() {
  Result r;
  r.name = "gemm/wgmma/M:4096/N:4096/K:4096/dtype:bf16";
  r.case_name = "c";
  r.problem = "gemm";
  r.variant = "wgmma";
  r.backend = "cuda";
  r.params.set("M", std::int64_t{4096});
  r.status = Status::passed;
  r.work = {2.0 * 4096 * 4096 * 4096, 3.0 * 4096 * 4096 * 2};
  CheckResult c;
  c.passed = true;
  r.check = c;
  Timing t;
  t.samples = {200e-6, 200e-6, 200e-6};
  t.stats = compute_stats(t.samples);
  SensorStats s = summarize_sensors(capped_samples(), 1980, 0.002);
  s.energy_j = 70.0;  // 700 W over 0.1 s
  s.energy_source = "counter";
  s.seconds = 0.1;
  t.sensors = s;
  SteadyState st;
  st.reached = true;
  st.seconds = 1.4;
  st.max_seconds = 10;
  st.clock_source = "nvml";
  st.burst_median_s = 160e-6;
  st.burst_samples = 12;
  st.burst_mhz = 1980;
  st.settled_mhz = 1470;
  t.steady = st;
  r.timing = t;
  return r;
}

}  // namespace harness::test
