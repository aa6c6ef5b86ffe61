#pragma once
// The trust check of a result timed in rounds (interleave, issue 33). Its profiling pass
// cannot stand in for its timing there: the pass re-warms and traces the kernel alone, in
// that kernel's own power state, while the rounds ran every variant of the case in turn,
// in a shared one (measured on an H100, power-capped bf16 GEMMs: 1 of 15 within 2% of the
// event median, -16% .. +17%). So right after the rounds, while the GPU is still in their
// state, each variant gets one more batch timed exactly as a round times it (an L2 flush
// before each launch in cold mode, CUDA events around each launch, the launches queued
// back to back, one synchronisation at the end), with CUPTI recording the same launches:
// the event time and the kernel time of the same launches, in the rounds' state. The batch
// is as long as a round's (about 50 ms of launches, at least kTracedRoundLaunches), and the
// caller may record the NVML clock over its launches (window: called with true before the
// first launch is enqueued, false once the stream has drained), so that the trust check can
// compare the round's CUPTI time with the rounds' event median at matched clocks.
//
//   TracedLaunches t = trace_launches(launch, flush_or_empty, stream, traced_round_launches(median), window);
//   t.sm_mhz_median = ...;  // the clock samples between the two window calls
//   result.profile["traced_round"] = to_json(t);
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <cuda_runtime_api.h>
#include <nlohmann/json.hpp>

#include "profile/kernel_trace.hpp"

namespace harness {

inline constexpr int kTracedRoundLaunches = 10;

// Launches of a traced round for a result whose samples take `sample_s`: as many as a
// timed batch of it has (measure.hpp's batch_launches), at least kTracedRoundLaunches
// (also where no sample is known, sample_s <= 0).
int traced_round_launches(double sample_s);

// Clock readings a traced round needs before it records a clock (a round shorter than a
// few sampling periods has one reading or none).
inline constexpr std::size_t kTracedRoundMinClockReadings = 3;

struct TracedLaunches {
  int launches = 0;
  std::vector<double> event_s;   // per launch: the events around it
  // Per launch: its kernels' CUPTI durations, summed (the records in GPU order, cut into
  // `launches` equal groups); empty when the count of records is not a multiple of the
  // launches (then only kernel_total_s holds).
  std::vector<double> kernel_s;
  double kernel_total_s = 0;     // every kernel of the batch but the flushes
  double sm_mhz_median = 0;      // NVML's SM clock over the launches (set by the caller; 0: none)
  std::size_t clock_samples = 0;
  std::optional<std::string> unavailable;  // "kernel trace unavailable: ..."
};

// The kernel records of a batch with those of the L2 flush taken out (`flush_names`: the
// mangled names the flush launches), grouped per launch as TracedLaunches::kernel_s says.
// Pure; public for the tests.
void assign_kernels(TracedLaunches& t, std::vector<KernelRecord> records, const std::vector<std::string>& flush_names);

// Times `launches` launches as a round does (`before` before each, outside the events:
// the L2 flush, or empty) with CUPTI on; `window` (may be empty) is called with true right
// before the first launch is enqueued and with false once they have all run. CUDA errors
// propagate (harness::CudaError); CUPTI's refusals become `unavailable`.
TracedLaunches trace_launches(const std::function<void()>& launch, const std::function<void()>& before,
                              cudaStream_t stream, int launches, const std::function<void(bool)>& window = {});

// {"launches", "event_median_s", "kernel_median_s" (or "kernel_mean_s"), "event_over_kernel",
// "clock": {"source": "nvml", "during": "traced launches", "samples", "sm_mhz_median"} where
// the clock was read}, or {"unavailable": why}.
nlohmann::json to_json(const TracedLaunches& t);

}  // namespace harness
