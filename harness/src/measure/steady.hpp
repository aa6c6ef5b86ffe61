#pragma once
// steady: true. Warm-up batches until the SM clock settles (measure/settle.hpp), keeping
// the first samples as the burst figure. The GPU, its clock and the time come through
// hooks, so that the loop runs on synthetic clocks in the tests.
#include <cstddef>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "types/sensors.hpp"
#include "types/settings.hpp"

namespace harness {

struct SteadyHooks {
  // Runs n timed samples back to back; returns their per-launch seconds.
  std::function<std::vector<double>(std::size_t n)> run_batch;
  // The clock readings taken since the last call: {seconds since the warm-up began, MHz}.
  std::function<std::vector<std::pair<double, double>>()> clock;
  // Seconds since the warm-up began.
  std::function<double()> now;
  std::string clock_source;  // "nvml" or "probe"
};

SteadyState warm_until_steady(const SteadyHooks& hooks, const SteadySettings& settings);

// "steady after 1.4 s at 1470 MHz; burst 602.00 us at 1980 MHz", or
// "steady: not reached in 10 s; burst ..." when the clock kept drifting until the cap.
std::string steady_text(const SteadyState& s);

}  // namespace harness
