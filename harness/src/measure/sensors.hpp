#pragma once
// The GPU's sensors during a result: a source of readings (NVML on a GPU machine, a fake
// in the tests), a background thread that samples it, and the summary a result keeps.
//
// Why a thread rather than a reading around each batch: the batches are enqueued back to
// back and the host only wakes at their end, when the GPU has just gone idle; a reading
// then sees the idle clock and power, not the kernel's. A thread reading every few
// milliseconds sees the GPU while it works, costs no GPU time and never touches the
// stream. NVML's power reading on recent GPUs is itself an average over a window (up to
// 1 s), so its median over a result is a smoothed figure; the energy counter is exact.
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "types/sensors.hpp"

namespace harness {

// Where readings come from. Implementations are called from the sampler's thread and the
// measuring thread at once and must allow that (NVML does).
class SensorSource {
 public:
  virtual ~SensorSource() = default;
  // Fills what it can of `out` (t_s is the caller's); false when nothing could be read.
  virtual bool read(SensorSample& out) = 0;
  // The energy counter in millijoules since some origin, or nothing where unsupported.
  virtual std::optional<double> energy_mj() = 0;
  // The device's maximum SM clock (MHz), 0 when unknown.
  virtual double max_sm_mhz() = 0;
};

// NVML's clock-event reason bits (stable values of nvml.h's nvmlClocksEventReason*),
// as the names a report shows; gpu_idle is left out (see SensorStats::reasons).
std::vector<std::string> reason_names(std::uint64_t bits);

// Reads `source` every `period_s` on a thread of its own, from construction until stop().
class SensorSampler {
 public:
  SensorSampler(SensorSource& source, double period_s);
  ~SensorSampler();
  SensorSampler(const SensorSampler&) = delete;
  SensorSampler& operator=(const SensorSampler&) = delete;

  double now() const;  // seconds since the sampler started (the samples' clock)
  double period() const { return period_s_; }
  // The samples taken at or after `from_s` so far.
  std::vector<SensorSample> since(double from_s) const;
  void stop();  // ends the thread (idempotent)

 private:
  void loop();
  SensorSource& source_;
  double period_s_;
  std::int64_t t0_ns_;
  mutable std::mutex mutex_;
  std::vector<SensorSample> samples_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

// The summary of `samples` (those of the timed region). max_mhz: the device's maximum
// SM clock. Energy is left for the caller (the counter is read around the region).
SensorStats summarize_sensors(const std::vector<SensorSample>& samples, double max_mhz, double period_s);
// The console's line under a result whose clock fell:
// "clock 1470 MHz (74% of 1980), power 698 W, sw_power_cap".
std::string clock_text(const SensorStats& s);
// Energy from the power samples (trapezoids over their times), where no counter is.
std::optional<double> integrate_power_j(const std::vector<SensorSample>& samples);

}  // namespace harness
