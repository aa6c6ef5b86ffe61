#pragma once
// Timed samples. GPU: CUDA events around each launch on one stream, samples enqueued
// back to back in batches (no host gap inside a batch), L2 flushed before each sample in
// cold mode. CPU: a steady clock around each call.
//
// steady: true (measure/steady.hpp): after the warm-up, batches until the SM clock settles;
// the first samples are kept as the burst figure (Timing::steady).
//
// Stopping rule: warm up; then take samples until at least min_samples are taken, their
// sum reaches min_time and the relative noise (stddev / mean) is at most the target, or
// until max_time of wall time has passed (then noise_reached is false).
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <cuda_runtime_api.h>

#include "measure/l2_flush.hpp"
#include "measure/sensors.hpp"
#include "measure/stats.hpp"
#include "types/settings.hpp"
#include "types/timing.hpp"

namespace harness {

// Fills the figures from `mhz` (exposed for tests).
ClockStats clock_stats(std::vector<double> mhz, double max_mhz, double threshold);

// `launch` enqueues one run on `stream` (and must not synchronize). `sensors` (NVML; null
// where there is none) is sampled from the warm-up to the last timed batch: the timed
// region's readings go into Timing::sensors, the warm-up's settle steady: true.
Timing time_cuda(const std::function<void()>& launch, cudaStream_t stream,
                 const MeasureSettings& settings, L2Flusher* flusher, SensorSource* sensors = nullptr);
Timing time_cpu(const std::function<void()>& run, const MeasureSettings& settings);

// Launches in a timed CUDA batch whose samples take `sample_s` each: about 50 ms of work
// (kBatchSeconds), 1 to 256 launches.
std::size_t batch_launches(double sample_s);

// One result's timing advanced one batch at a time, so that the runner can sample the
// variants of a case in rounds (interleave: true; measure/interleave.hpp). Creating one
// warms up (and captures the graph, and warms up until steady) as time_cuda/time_cpu do;
// step() times one batch (CUDA: about 50 ms of samples; host: one sample) and says whether
// the stopping rule now holds; finish() gives the Timing. The stopping rule and max_time
// count this result's own time only. time_cuda and time_cpu are start + steps + finish.
class BatchedTiming {
 public:
  virtual ~BatchedTiming() = default;
  virtual bool step() = 0;      // one batch; true once finished (then call finish())
  virtual Timing finish() = 0;  // once
  // The median sample so far (seconds; 0 before any): what the next batch is sized from.
  virtual double median_so_far() const { return 0; }
  // Interleaved with other results: recorded in Timing::interleaved, and the sensors are
  // summarized over this result's own batches.
  void set_interleaved() { interleaved_ = true; }

 protected:
  bool interleaved_ = false;
};
std::unique_ptr<BatchedTiming> start_cuda(std::function<void()> launch, cudaStream_t stream,
                                          const MeasureSettings& settings, L2Flusher* flusher,
                                          SensorSource* sensors = nullptr);
std::unique_ptr<BatchedTiming> start_cpu(std::function<void()> run, const MeasureSettings& settings);

// Whether sampling may stop after these samples (exposed for tests).
bool should_stop(const std::vector<double>& samples, double elapsed_wall,
                 const MeasureSettings& settings, std::string* reason);

}  // namespace harness
