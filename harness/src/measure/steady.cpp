#include "measure/steady.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "core/units.hpp"
#include "measure/settle.hpp"
#include "measure/stats.hpp"

namespace harness {

namespace {
// Batches of about 50 ms of work: a probe after each gives about ten clock readings per
// 0.5 s window, enough for its median, and the host checks the clock often enough.
constexpr double kBatchSeconds = 0.05;
constexpr std::size_t kMaxBatch = 256;

double median_of(std::vector<double> v) { return v.empty() ? 0.0 : compute_stats(v).median; }
}  // namespace

SteadyState warm_until_steady(const SteadyHooks& hooks, const SteadySettings& settings) {
  SteadyState st;
  st.max_seconds = settings.max_time;
  st.clock_source = hooks.clock_source;
  SettleDetector detector(settings);
  std::vector<double> burst, burst_mhz, all;
  std::size_t batch = 1;  // the first batch of one sample estimates the run time
  double now = hooks.now();
  for (;;) {
    const double began = now;
    const std::vector<double> times = hooks.run_batch(batch);
    if (began < settings.burst || burst.empty()) burst.insert(burst.end(), times.begin(), times.end());
    all.insert(all.end(), times.begin(), times.end());
    for (const auto& [t, mhz] : hooks.clock()) {
      if (t <= settings.burst || burst_mhz.empty()) burst_mhz.push_back(mhz);
      detector.add(t, mhz);
    }
    now = hooks.now();
    if (detector.settled() || detector.gave_up(now) || now >= settings.max_time) break;
    const double est = std::max(median_of(all), 1e-7);
    batch = std::clamp<std::size_t>(static_cast<std::size_t>(kBatchSeconds / est), 1, kMaxBatch);
  }
  st.reached = detector.settled();
  st.seconds = st.reached ? detector.settled_at() : now;
  st.burst_median_s = median_of(burst);
  st.burst_samples = burst.size();
  st.burst_mhz = median_of(burst_mhz);
  st.settled_mhz = detector.last_window_median();
  return st;
}

std::string steady_text(const SteadyState& s) {
  std::string text = s.reached ? fmt::format("steady after {:.1f} s", s.seconds)
                               : fmt::format("steady: not reached in {:g} s", s.max_seconds);
  if (s.reached && s.settled_mhz > 0) text += fmt::format(" at {:.0f} MHz", s.settled_mhz);
  if (s.burst_samples == 0) return text;
  text += fmt::format("; burst {}", format_seconds(s.burst_median_s));
  if (s.burst_mhz > 0) text += fmt::format(" at {:.0f} MHz", s.burst_mhz);
  return text;
}

}  // namespace harness
