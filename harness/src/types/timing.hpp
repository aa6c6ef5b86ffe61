#pragma once
// The timing of one result: its samples, their statistics, why sampling stopped, and the
// SM clock while it ran. Filled by measure/, carried by the result, written by report/.
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "types/sensors.hpp"

namespace harness {

// Summary statistics of timing samples (computed by measure/stats.hpp).
struct Stats {
  std::size_t count = 0;
  double min = 0, max = 0, mean = 0, median = 0, stddev = 0;
  double q1 = 0, q3 = 0;     // first and third quartiles (linear interpolation)
  double rel_noise = 0;      // stddev / mean (0 and meaningless with fewer than 2 samples)
  // One sample has no spread: its noise is not known (shown n/a, written null).
  bool has_noise() const { return count >= 2; }
};

// The SM clock during the timed batches (one probe after each batch).
struct ClockStats {
  std::vector<double> mhz;     // one per batch
  double min_mhz = 0, median_mhz = 0;
  double max_mhz = 0;          // the device's maximum SM clock
  double threshold = 0.75;     // a batch under threshold * max_mhz is throttled
  std::size_t throttled_batches = 0;
  bool throttled() const { return throttled_batches > 0; }
};

struct Timing {
  std::vector<double> samples;  // seconds, one per run
  Stats stats;
  bool noise_reached = false;
  std::string stopping_rule;    // "noise", "entropy", "samples"
  std::string stop_reason;      // "noise reached", "entropy flat", "sample count reached", "time cap", "sample cap"
  double wall_time = 0;         // seconds spent measuring, warm-up included
  std::string mode;             // "events", "graph" or "host"
  std::size_t launches_per_sample = 1;  // graph: launches per replay (a sample is the mean)
  std::string note;             // why graph timing fell back to events
  std::optional<ClockStats> clocks;   // the probe kernel's clock (measure/clock_probe.hpp)
  std::optional<SensorStats> sensors; // NVML over the timed batches (absent without NVML)
  std::optional<SteadyState> steady;  // steady: true: how the clock settled before sampling
  // interleave: true: sampled in rounds with the case's other variants (one batch each per
  // round); `rounds` is how many rounds this result took part in (its batches).
  bool interleaved = false;
  std::size_t rounds = 0;
};

}  // namespace harness
