#pragma once
// The trust check of a result timed in rounds (interleave, issue 33). Its profiling pass
// cannot stand in for its timing there: the pass re-warms and traces the kernel alone, in
// that kernel's own power state, while the rounds ran every variant of the case in turn,
// in a shared one (measured on an H100, power-capped bf16 GEMMs: 1 of 15 within 2% of the
// event median, -16% .. +17%). So right after the rounds, while the GPU is still in their
// state, each variant gets one more batch timed exactly as a round times it (an L2 flush
// before each launch in cold mode, CUDA events around each launch, the launches queued
// back to back, one synchronisation at the end), with CUPTI recording the same launches:
// the event time and the kernel time of the same launches, in the rounds' state.
//
//   TracedLaunches t = trace_launches(launch, flush_or_empty, stream, kTracedRoundLaunches);
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

struct TracedLaunches {
  int launches = 0;
  std::vector<double> event_s;   // per launch: the events around it
  // Per launch: its kernels' CUPTI durations, summed (the records in GPU order, cut into
  // `launches` equal groups); empty when the count of records is not a multiple of the
  // launches (then only kernel_total_s holds).
  std::vector<double> kernel_s;
  double kernel_total_s = 0;     // every kernel of the batch but the flushes
  std::optional<std::string> unavailable;  // "kernel trace unavailable: ..."
};

// The kernel records of a batch with those of the L2 flush taken out (`flush_names`: the
// mangled names the flush launches), grouped per launch as TracedLaunches::kernel_s says.
// Pure; public for the tests.
void assign_kernels(TracedLaunches& t, std::vector<KernelRecord> records, const std::vector<std::string>& flush_names);

// Times `launches` launches as a round does (`before` before each, outside the events:
// the L2 flush, or empty) with CUPTI on. CUDA errors propagate (harness::CudaError);
// CUPTI's refusals become `unavailable`.
TracedLaunches trace_launches(const std::function<void()>& launch, const std::function<void()>& before,
                              cudaStream_t stream, int launches);

// {"launches", "event_median_s", "kernel_median_s" (or "kernel_mean_s"), "event_over_kernel"}, or
// {"unavailable": why}.
nlohmann::json to_json(const TracedLaunches& t);

}  // namespace harness
