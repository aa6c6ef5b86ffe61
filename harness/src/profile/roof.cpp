#include "profile/roof.hpp"

#include <algorithm>
#include <cstdlib>
#include <sstream>

#include <fmt/format.h>

#include "core/units.hpp"
#include "harness/error.hpp"

namespace harness {

double flop_peak_factor(std::string_view dtype) {
  if (dtype == "f32" || dtype == "tf32") return 8;
  if (dtype == "bf16" || dtype == "f16") return 16;
  if (dtype == "f64" || dtype == "i32") return 1;
  return 32;
}

std::optional<Roof> device_roof(const Work& work, std::string_view dtype, double l2_bytes, const DevicePeaks& peaks) {
  if (!peaks.measured()) return std::nullopt;
  Roof r;
  const double factor = flop_peak_factor(dtype);
  r.flop_time_s = work.flops / (peaks.fp32_gflops * 1e9 * factor);
  const double bytes = std::max(0.0, work.bytes - l2_bytes);
  r.byte_time_s = bytes / (peaks.dram_gbytes_per_s * 1e9);
  r.time_s = std::max(r.flop_time_s, r.byte_time_s);
  r.basis = fmt::format("measured peaks: {} x {} FP32 ({}), {} GB/s DRAM for the bytes beyond the {} L2",
                        format_number(factor), format_rate(peaks.fp32_gflops), dtype.empty() ? "no dtype" : std::string(dtype),
                        format_figure(peaks.dram_gbytes_per_s), format_bytes(l2_bytes));
  return r;
}

std::optional<Roof> test_roof_from_env(const Work& work) {
  const char* env = std::getenv("HARNESS_TEST_ROOF");
  if (!env || !*env) return std::nullopt;
  double gflops = 0, gbps = 0;
  std::stringstream in(env);
  std::string item;
  while (std::getline(in, item, ',')) {
    const auto eq = item.find('=');
    const std::string key = item.substr(0, eq);
    double* target = key == "gflops" ? &gflops : key == "gbytes_per_s" ? &gbps : nullptr;
    char* end = nullptr;
    const double v = eq == std::string::npos ? 0 : std::strtod(item.c_str() + eq + 1, &end);
    if (!target || !(v > 0) || (end && *end))
      throw InputError(fmt::format("HARNESS_TEST_ROOF: '{}' is not gflops=G or gbytes_per_s=B with G, B > 0", item));
    *target = v;
  }
  Roof r;
  r.flop_time_s = gflops > 0 ? work.flops / (gflops * 1e9) : 0;
  r.byte_time_s = gbps > 0 ? work.bytes / (gbps * 1e9) : 0;
  r.time_s = std::max(r.flop_time_s, r.byte_time_s);
  r.basis = fmt::format("test override HARNESS_TEST_ROOF={}", env);
  return r;
}

std::optional<std::string> below_roof(double median_s, const Roof& roof) {
  if (!(roof.time_s > 0) || !(median_s < kSuspiciousMargin * roof.time_s)) return std::nullopt;
  return fmt::format("median {} is {} of the roof time {} for the declared work ({}): the work cannot have been done "
                     "in the timed region",
                     format_seconds(median_s), fmt::format("{}%", format_3sig(100 * median_s / roof.time_s)), format_seconds(roof.time_s),
                     roof.basis);
}

}  // namespace harness
