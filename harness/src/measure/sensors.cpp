#include "measure/sensors.hpp"

#include <algorithm>
#include <chrono>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "measure/stats.hpp"

namespace harness {

namespace {
std::int64_t steady_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

struct ReasonBit {
  std::uint64_t bit;
  const char* name;
};
// nvml.h: nvmlClocksEventReason* (formerly nvmlClocksThrottleReason*); the values are part
// of NVML's ABI, so they are written here and need no header (the fake sensors use them).
constexpr ReasonBit kReasons[] = {
    {0x2, "applications_clocks"}, {0x4, "sw_power_cap"}, {0x8, "hw_slowdown"},     {0x10, "sync_boost"},
    {0x20, "sw_thermal"},         {0x40, "hw_thermal"},  {0x80, "hw_power_brake"}, {0x100, "display_clocks"},
};
}  // namespace

std::vector<std::string> reason_names(std::uint64_t bits) {
  std::vector<std::string> out;
  for (const auto& r : kReasons)
    if (bits & r.bit) out.emplace_back(r.name);
  return out;
}

SensorSampler::SensorSampler(SensorSource& source, double period_s)
    : source_(source), period_s_(period_s), t0_ns_(steady_ns()) {
  thread_ = std::thread([this] { loop(); });
}

SensorSampler::~SensorSampler() { stop(); }

double SensorSampler::now() const { return static_cast<double>(steady_ns() - t0_ns_) * 1e-9; }

void SensorSampler::stop() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
}

std::vector<SensorSample> SensorSampler::since(double from_s) const {
  std::lock_guard lock(mutex_);
  auto first = std::lower_bound(samples_.begin(), samples_.end(), from_s,
                                [](const SensorSample& s, double t) { return s.t_s < t; });
  return {first, samples_.end()};
}

void SensorSampler::loop() {
  const auto period = std::chrono::nanoseconds(static_cast<std::int64_t>(period_s_ * 1e9));
  auto next = std::chrono::steady_clock::now();
  while (!stop_) {
    SensorSample s;
    s.t_s = now();
    if (source_.read(s)) {
      std::lock_guard lock(mutex_);
      samples_.push_back(s);
    }
    // A fixed schedule, not sleep(period) after each reading: the readings' own cost
    // (tens of microseconds each) does not stretch the period.
    next += period;
    const auto now_tp = std::chrono::steady_clock::now();
    if (next < now_tp) next = now_tp;
    std::this_thread::sleep_until(next);
  }
}

SensorStats summarize_sensors(const std::vector<SensorSample>& samples, double max_mhz, double period_s) {
  SensorStats st;
  st.samples = samples.size();
  st.period_s = period_s;
  st.sm_mhz_limit = max_mhz;
  std::vector<double> mhz, watts;
  for (const auto& s : samples) {
    if (s.sm_mhz > 0) mhz.push_back(s.sm_mhz);
    if (s.power_w > 0) watts.push_back(s.power_w);
    st.temp_c_max = std::max(st.temp_c_max, s.temp_c);
    if (s.has_reasons)
      for (auto& name : reason_names(s.reasons)) ++st.reason_samples[name];
  }
  if (!mhz.empty()) {
    const Stats c = compute_stats(mhz);
    st.sm_mhz_min = c.min;
    st.sm_mhz_median = c.median;
    st.sm_mhz_max = c.max;
  }
  if (!watts.empty()) {
    const Stats w = compute_stats(watts);
    st.power_w_min = w.min;
    st.power_w_median = w.median;
    st.power_w_max = w.max;
  }
  for (const auto& [name, n] : st.reason_samples) st.reasons.push_back(name);
  return st;
}

std::string clock_text(const SensorStats& s) {
  std::string text = fmt::format("clock {:.0f} MHz", s.sm_mhz_median);
  if (s.sm_mhz_limit > 0)
    text += fmt::format(" ({:.0f}% of {:.0f})", 100 * s.sm_mhz_median / s.sm_mhz_limit, s.sm_mhz_limit);
  if (s.power_w_median > 0) text += fmt::format(", power {:.0f} W", s.power_w_median);
  if (!s.reasons.empty()) text += fmt::format(", {}", fmt::join(s.reasons, ", "));
  return text;
}

std::optional<double> integrate_power_j(const std::vector<SensorSample>& samples) {
  double joules = 0;
  bool any = false;
  for (std::size_t i = 1; i < samples.size(); ++i) {
    const auto& a = samples[i - 1];
    const auto& b = samples[i];
    if (a.power_w <= 0 || b.power_w <= 0 || b.t_s <= a.t_s) continue;
    joules += 0.5 * (a.power_w + b.power_w) * (b.t_s - a.t_s);
    any = true;
  }
  if (!any) return std::nullopt;
  return joules;
}

}  // namespace harness
