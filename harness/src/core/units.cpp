#include "core/units.hpp"

#include <cmath>

#include <fmt/format.h>

namespace harness {

std::string format_seconds(double s) {
  if (s >= 1) return fmt::format("{:.3f} s", s);
  if (s >= 1e-3) return fmt::format("{:.3f} ms", s * 1e3);
  if (s >= 1e-6) return fmt::format("{:.2f} us", s * 1e6);
  return fmt::format("{:.0f} ns", s * 1e9);
}

std::string format_seconds_short(double s) {
  if (s >= 1) return format_figure(s) + " s";
  if (s >= 1e-3) return format_figure(s * 1e3) + " ms";
  if (s >= 1e-6) return format_figure(s * 1e6) + " us";
  return format_figure(s * 1e9) + " ns";
}

std::string format_rate(double gflops) {
  if (gflops >= 1000) return fmt::format("{:.1f} TFLOP/s", gflops / 1000);
  return fmt::format("{:.1f} GFLOP/s", gflops);
}

std::string format_energy(double joules) {
  if (joules >= 1) return fmt::format("{:.2f} J", joules);
  if (joules >= 1e-3) return fmt::format("{:.2f} mJ", joules * 1e3);
  return fmt::format("{:.2f} uJ", joules * 1e6);
}

std::string format_flop_per_j(double flop_per_j) {
  if (flop_per_j >= 1e12) return fmt::format("{:.2f} TFLOP/J", flop_per_j * 1e-12);
  return fmt::format("{:.1f} GFLOP/J", flop_per_j * 1e-9);
}

std::string format_bytes(double bytes) {
  if (bytes >= 1024.0 * 1024 * 1024) return fmt::format("{:.2f} GiB", bytes / (1024.0 * 1024 * 1024));
  if (bytes >= 1024.0 * 1024) return fmt::format("{:.1f} MiB", bytes / (1024.0 * 1024));
  if (bytes >= 1024.0) return fmt::format("{:.1f} KiB", bytes / 1024.0);
  return fmt::format("{:.0f} B", bytes);
}

std::string format_number(double v) {
  if (v == std::floor(v) && std::fabs(v) < 1e15) return fmt::format("{}", static_cast<long long>(v));
  return fmt::format("{:g}", v);
}

std::string format_figure(double v) {
  if (v >= 100) return fmt::format("{:.0f}", v);
  if (v >= 10) return fmt::format("{:.1f}", v);
  return fmt::format("{:.2f}", v);
}

std::string format_3sig(double v) {
  const double a = std::fabs(v);
  if (a >= 100) return fmt::format("{:.0f}", v);
  if (a >= 10) return fmt::format("{:.1f}", v);
  if (a >= 1) return fmt::format("{:.2f}", v);
  return fmt::format("{:.3g}", v);
}
std::string format_change(double fraction) { return fmt::format("{:+.1f}%", fraction * 100); }

std::string format_p_value(double p) {
  if (p >= 0.001) return fmt::format("{:.3f}", p);
  return p < 1e-16 ? std::string("<1e-16") : fmt::format("{:.1e}", p);
}
std::string format_curve_value(double v) {
  if (!std::isfinite(v)) return "-";
  const double a = std::fabs(v);
  return a >= 0.01 && a < 1e4 ? fmt::format("{:.3f}", v) : fmt::format("{:.4g}", v);
}

}  // namespace harness
