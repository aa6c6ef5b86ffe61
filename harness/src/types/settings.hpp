#pragma once
// How one result is measured: the settings a suite gives (defaults, overridden per case),
// read by the measuring loop and written into every result. A record at the bottom of
// the harness: suite/ fills it, measure/ reads it, report/ writes it.
#include <optional>
#include <string_view>

namespace harness {

enum class CacheMode { hot, cold };
std::string_view to_string(CacheMode mode);
// events: CUDA events around each launch; graph: a CUDA graph of k launches replayed,
// per-launch time = replay time / k (no launch gaps: for kernels of a few microseconds).
enum class TimingMode { events, graph };
std::string_view to_string(TimingMode mode);

// When to stop taking samples (the rules: measure/stopping.hpp).
enum class StoppingRule { noise, entropy, samples };
std::string_view to_string(StoppingRule rule);
std::optional<StoppingRule> stopping_rule_from_string(std::string_view name);

struct StoppingSettings {
  StoppingRule rule = StoppingRule::noise;
  int samples = 100;         // rule samples: the count
  double max_angle = 0.048;  // rule entropy: degrees
  double min_r2 = 0.36;      // rule entropy
};

struct MeasureSettings {
  int warmup = 3;             // untimed runs before the first sample
  int min_samples = 10;
  double min_time = 0.5;      // seconds of samples at least
  double max_time = 5.0;      // seconds: stop here even if noise is above target
  double noise = 0.02;        // target relative noise (stddev / mean)
  CacheMode cache = CacheMode::cold;  // cold: L2 flushed before each sample
  double timeout = 0;         // seconds for the whole case x variant; 0 = none
  TimingMode timing = TimingMode::events;
  StoppingSettings stopping;  // when to stop sampling (measure/stopping.hpp)
  double throttle = 0.75;     // SM clock under this share of the maximum: throttled
  // Set by the runner for a collective (not a suite key): exactly warmup + stopping.samples
  // launches, whatever the timings, so that every rank launches the same collectives.
  bool fixed_launches = false;
};

}  // namespace harness
