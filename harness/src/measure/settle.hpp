#pragma once
// When the SM clock has settled (steady: true). A power-capped GPU runs the first moments
// of heavy work at its boost clock, then its power limiter pulls the clock down over some
// hundreds of milliseconds and keeps it oscillating around the capped level (H200, bf16
// GEMM: 1980 -> 1455-1500 MHz). A spread test (max - min under 2%) would never pass on
// that oscillation; the detector asks that the clock stopped drifting instead: the median
// of the last window is within the tolerance of the median of the window before it, and
// the median of its newest quarter within the tolerance of the last window's.
#include <vector>

#include "types/settings.hpp"

namespace harness {

class SettleDetector {
 public:
  explicit SettleDetector(const SteadySettings& settings) : s_(settings) {}
  // One clock reading at t seconds since the warm-up began (in time order; MHz > 0).
  void add(double t_s, double mhz);
  bool settled() const { return settled_; }
  double settled_at() const { return settled_at_; }  // seconds; 0 while not settled
  double last_window_median() const { return last_median_; }
  // Past the cap without settling.
  bool gave_up(double t_s) const { return !settled_ && t_s >= s_.max_time; }

 private:
  SteadySettings s_;
  std::vector<double> t_, mhz_;
  bool settled_ = false;
  double settled_at_ = 0;
  double last_median_ = 0;
};

}  // namespace harness
