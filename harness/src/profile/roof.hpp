#pragma once
// The device's roof for a result's declared work (issue 33, "kernels that cheat"): the
// shortest time any kernel could do it in. A median below kSuspiciousMargin x that time
// means the work was not done (or not in the timed region), and the result is marked
// `suspicious`. The roof is deliberately generous, so that honest kernels are never
// flagged: it is a bound, not the roofline's estimate (profile/metrics.hpp).
//
//   flop time = work.flops / (measured FP32 FFMA peak x flop_peak_factor(dtype))
//   byte time = (work.bytes - the L2's size) / measured DRAM copy bandwidth: up to an L2's
//               worth of the bytes may never reach DRAM inside the timed region, even with
//               the L2 flushed (outputs are written back later, by the next flush; with a
//               hot cache or graph timing inputs may be resident), so they count as free
//   roof time = the larger of the two
#include <optional>
#include <string>
#include <string_view>

#include "harness/problem.hpp"
#include "profile/device_peaks.hpp"

namespace harness {

// Suspicious below this share of the roof time. The roof's peaks are the best of ten
// measured runs, and a real kernel can still beat the copy kernel's bandwidth by a few
// percent (a read-only kernel moves more bytes per second than a copy): 0.9 leaves that
// room and still catches every cheat that skips most of its work.
inline constexpr double kSuspiciousMargin = 0.9;

// The fastest dense rate the tensor cores (or the FP32 pipes) reach for a dtype, as a
// multiple of the FP32 FFMA rate, from the A100 and H100 specifications (H100 SXM: FP32
// 67, TF32 495, BF16/F16 990, FP8 1979 TFLOP/s; A100: 19.5, 156, 312, 624): f32 and tf32
// 8 (an f32 problem may run on TF32 tensor cores: cuBLAS, 3xTF32 attention), bf16 and f16
// 16, f64 1, i32 1; any other or no dtype 32 (the 8-bit rate: nothing is faster).
double flop_peak_factor(std::string_view dtype);

struct Roof {
  double time_s = 0;        // the larger of the two below
  double flop_time_s = 0;
  double byte_time_s = 0;
  std::string basis;        // how it was found, for the report and the console
};

// `l2_bytes`: the device's L2. Nothing without measured peaks.
std::optional<Roof> device_roof(const Work& work, std::string_view dtype, double l2_bytes, const DevicePeaks& peaks);

// Test only: HARNESS_TEST_ROOF="gflops=G,gbytes_per_s=B" gives every result, CPU ones
// too, the roof max(flops / G, bytes / B) (no dtype factor, no L2): how the tests make
// the roof check fire on a machine without a GPU. Unset: nothing. Malformed: InputError.
std::optional<Roof> test_roof_from_env(const Work& work);

// "median 12.0 us is 0.4% of the roof time 3.00 ms for the declared work (...)" when
// median_s < kSuspiciousMargin * roof.time_s, else nothing.
std::optional<std::string> below_roof(double median_s, const Roof& roof);

}  // namespace harness
