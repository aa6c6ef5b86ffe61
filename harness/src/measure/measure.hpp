#pragma once
// Timed samples. GPU: CUDA events around each launch on one stream, samples enqueued
// back to back in batches (no host gap inside a batch), L2 flushed before each sample in
// cold mode. CPU: a steady clock around each call.
//
// Stopping rule: warm up; then take samples until at least min_samples are taken, their
// sum reaches min_time and the relative noise (stddev / mean) is at most the target, or
// until max_time of wall time has passed (then noise_reached is false).
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <cuda_runtime_api.h>

#include "measure/l2_flush.hpp"
#include "measure/stats.hpp"
#include "suite/suite.hpp"

namespace harness {

// The SM clock during the timed batches (one probe after each batch).
struct ClockStats {
  std::vector<double> mhz;     // one per batch
  double min_mhz = 0, median_mhz = 0;
  double max_mhz = 0;          // the device's maximum SM clock
  double threshold = 0.75;     // a batch under threshold * max_mhz is throttled
  std::size_t throttled_batches = 0;
  bool throttled() const { return throttled_batches > 0; }
};
// Fills the figures from `mhz` (exposed for tests).
ClockStats clock_stats(std::vector<double> mhz, double max_mhz, double threshold);

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
  std::optional<ClockStats> clocks;
};


// `launch` enqueues one run on `stream` (and must not synchronize).
Timing time_cuda(const std::function<void()>& launch, cudaStream_t stream,
                 const MeasureSettings& settings, L2Flusher* flusher);
Timing time_cpu(const std::function<void()>& run, const MeasureSettings& settings);

// Whether sampling may stop after these samples (exposed for tests).
bool should_stop(const std::vector<double>& samples, double elapsed_wall,
                 const MeasureSettings& settings, std::string* reason);

}  // namespace harness
