#include "measure/settle.hpp"

#include <algorithm>
#include <cmath>

#include "measure/stats.hpp"

namespace harness {

namespace {
// The median of the readings with t in [from, to); 0 when there are none.
double window_median(const std::vector<double>& t, const std::vector<double>& v, double from, double to) {
  std::vector<double> in;
  for (std::size_t i = 0; i < t.size(); ++i)
    if (t[i] >= from && t[i] < to) in.push_back(v[i]);
  if (in.empty()) return 0;
  return compute_stats(in).median;
}

bool close(double a, double b, double tolerance) { return a > 0 && b > 0 && std::abs(a - b) <= tolerance * b; }
}  // namespace

void SettleDetector::add(double t_s, double mhz) {
  if (mhz <= 0) return;
  t_.push_back(t_s);
  mhz_.push_back(mhz);
  if (settled_ || t_s < s_.min_time || t_s < 2 * s_.window) return;
  const double end = t_s + 1e-12;  // the newest reading is part of the last window
  const double w = s_.window;
  const double before = window_median(t_, mhz_, end - 2 * w, end - w);
  last_median_ = window_median(t_, mhz_, end - w, end);
  // The newest quarter window too: a drop that began late in the last window leaves its
  // median at the old clock for a while (boost until 0.9 s, capped after: at 1.0 s both
  // windows' medians still read the boost clock).
  const double newest = window_median(t_, mhz_, end - w / 4, end);
  if (close(last_median_, before, s_.tolerance) && close(newest, last_median_, s_.tolerance)) {
    settled_ = true;
    settled_at_ = t_s;
  }
}

}  // namespace harness
