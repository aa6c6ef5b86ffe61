#pragma once
// The marks of a timed result that the harness cannot trust (types/integrity.hpp): faster
// than the device's roof (`suspicious`), and work outside the timed region. Both leave
// the status alone (the output was right); the console, the pages and compare show them.
#include "profile/device_peaks.hpp"
#include "profile/kernel_trace.hpp"
#include "types/result.hpp"

namespace harness {

// Sets r.integrity's roof and, when the median is below kSuspiciousMargin x the roof
// time, `suspicious`. CUDA results against `peaks` (null or unmeasured: no roof, and the
// basis says so); CPU results have no roof, except under the test-only HARNESS_TEST_ROOF.
void judge_roof(Result& r, const DevicePeaks* peaks, double l2_bytes);

// Sets r.integrity.outside when the traced runs of the profiling pass saw kernels on a
// stream other than the launch stream, or still running after the launch stream had
// finished (KernelBreakdown::outside).
void judge_timed_region(Result& r, const KernelBreakdown& kernels);

}  // namespace harness
