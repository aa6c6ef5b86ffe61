#pragma once
// Bringing the GPU back to the power state a steady result was timed in, before its
// profiling pass. A power-capped kernel is timed in the sustained state (steady: the clock
// settled under the cap), but the profiling pass comes after the re-check on fresh inputs,
// with the GPU idle long enough for the limiter to let go: its traced launches then ran at
// the burst clock. Measured on an H100 (bf16 GEMM 8192^3 at the 700 W cap): event median
// 1.62-1.67 ms at ~1350 MHz, CUPTI kernel time 1.44-1.48 ms in a pass that NVML saw at
// 1965-1980 MHz, 12-13% apart, and the time did not scale with the clock reading (so no
// clock ratio can correct it afterwards). Launching the kernel back to back for as long as
// its clock took to settle puts the traced launches in the timed state instead.
#include <functional>

#include <cuda_runtime.h>

#include "types/timing.hpp"

namespace harness {

// How long to re-warm before profiling a result timed with steady: the warm-up its clock
// needed to settle, within [0.5, 3] s (3 s where it never settled); 0 for a result timed
// without steady (its samples began from the state the profiling pass also starts in).
double rewarm_seconds(const Timing& timing);

// Launches `before(); launch();` back to back on `stream` for `seconds` of wall time
// (synchronising every few launches, so that the time counts work done, not work queued).
// Returns the launches made.
int rewarm(const std::function<void()>& launch, const std::function<void()>& before, cudaStream_t stream,
           double seconds);

}  // namespace harness
