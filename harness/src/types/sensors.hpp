#pragma once
// What the GPU's own sensors (NVML: SM clock, power, temperature, clock-event reasons,
// energy counter) said while one result was timed, and how the clock settled before the
// timed samples (`steady: true`). Filled by measure/, carried by Timing, written by report/.
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace harness {

// One reading of the sensors. A field the device would not give stays at its "unread"
// value, so that one refused query (a permission, an old driver) costs that field only.
struct SensorSample {
  double t_s = 0;             // seconds since the sampler started
  double sm_mhz = 0;          // 0: not read
  double power_w = 0;         // 0: not read
  double temp_c = 0;          // 0: not read
  std::uint64_t reasons = 0;  // NVML clock-event (throttle) reason bits
  bool has_reasons = false;
};

// The sensors over the timed batches of one result.
struct SensorStats {
  std::string source = "nvml";
  std::size_t samples = 0;
  double period_s = 0;  // the sampling period asked for
  double sm_mhz_min = 0, sm_mhz_median = 0, sm_mhz_max = 0;
  double sm_mhz_limit = 0;  // the device's maximum SM clock (0: unknown)
  double power_w_min = 0, power_w_median = 0, power_w_max = 0;
  double temp_c_max = 0;
  // The clock-event reasons seen, by name (gpu_idle left out: the host's sync gaps between
  // batches show it, and it says nothing about the kernel), and in how many samples.
  std::vector<std::string> reasons;
  std::map<std::string, std::size_t> reason_samples;
  // Energy over the timed region: the counter's difference, or the power samples
  // integrated where the device has no counter. seconds: that region's wall time.
  std::optional<double> energy_j;
  std::string energy_source;  // "counter" or "power samples"
  double seconds = 0;
  // The clock fell: median under 95% of the limit, or a power or thermal reason seen.
  bool clock_fell() const;
  // Mean power over the timed region (energy / seconds), else the median power sample.
  std::optional<double> mean_power_w() const;
};

// The clock-event reasons that slow the SM clock down (a power or thermal limit).
bool is_limiting_reason(const std::string& name);

// How the SM clock settled before the timed samples (`steady: true`).
struct SteadyState {
  bool reached = false;
  double seconds = 0;      // warm-up spent until settled (or until the cap)
  double max_seconds = 0;  // the cap
  std::string clock_source;  // "nvml" or "probe"
  // Burst: the samples of the first moments of the warm-up, at the clock a short run sees.
  double burst_median_s = 0;
  std::size_t burst_samples = 0;
  double burst_mhz = 0;    // the median clock then (0: unknown)
  double settled_mhz = 0;  // the median clock of the last window (0: unknown)
};

}  // namespace harness
