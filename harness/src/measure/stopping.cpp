#include "measure/stopping.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "measure/measure.hpp"
#include "measure/stats.hpp"

namespace harness {

namespace {
constexpr std::size_t kMaxSamples = 10000;    // more only costs memory
constexpr std::size_t kEntropyWindow = 300;   // entropies the line is fitted to
}  // namespace

LineFit fit_line(const std::deque<double>& y) {
  LineFit f;
  const double n = static_cast<double>(y.size());
  if (y.size() < 2) return f;
  const double mean_x = (n - 1) / 2;
  double mean_y = 0;
  for (double v : y) mean_y += v;
  mean_y /= n;
  double sxy = 0, sxx = 0;
  for (std::size_t i = 0; i < y.size(); ++i) {
    const double dx = static_cast<double>(i) - mean_x;
    sxy += dx * (y[i] - mean_y);
    sxx += dx * dx;
  }
  f.slope = sxy / sxx;
  f.intercept = mean_y - f.slope * mean_x;
  double ss_res = 0, ss_tot = 0;
  for (std::size_t i = 0; i < y.size(); ++i) {
    const double fit = f.intercept + f.slope * static_cast<double>(i);
    ss_res += (y[i] - fit) * (y[i] - fit);
    ss_tot += (y[i] - mean_y) * (y[i] - mean_y);
  }
  f.r2 = ss_tot > 0 ? 1.0 - ss_res / ss_tot : 1.0;
  return f;
}

StoppingCriterion::StoppingCriterion(const MeasureSettings& settings) : settings_(settings) {}

double StoppingCriterion::entropy() const {
  double h = 0;
  const double n = static_cast<double>(samples_.size());
  for (const auto& [value, count] : frequencies_) {
    const double p = static_cast<double>(count) / n;
    h -= p * std::log2(p);
  }
  return h;
}

void StoppingCriterion::add(double sample) {
  samples_.push_back(sample);
  total_ += sample;
  if (settings_.stopping.rule != StoppingRule::entropy) return;
  auto it = std::lower_bound(frequencies_.begin(), frequencies_.end(), std::make_pair(sample, std::int64_t{0}));
  if (it != frequencies_.end() && it->first == sample) ++it->second;
  else frequencies_.insert(it, {sample, 1});
  entropies_.push_back(entropy());
  if (entropies_.size() > kEntropyWindow) entropies_.pop_front();
}

bool StoppingCriterion::entropy_flat() const {
  if (entropies_.size() < 2 || samples_.size() % 2 != 0) return false;
  const LineFit f = fit_line(entropies_);
  const double angle = std::atan(f.slope) * 180.0 / std::numbers::pi;
  return angle <= settings_.stopping.max_angle && f.r2 >= settings_.stopping.min_r2;
}

bool StoppingCriterion::finished(double elapsed_wall, std::string* reason) {
  auto say = [&](const char* r) {
    if (reason) *reason = r;
    return true;
  };
  const std::size_t n = samples_.size();
  if (n >= kMaxSamples) return say("sample cap");
  const bool enough = n >= static_cast<std::size_t>(settings_.min_samples) && total_ >= settings_.min_time;
  switch (settings_.stopping.rule) {
    case StoppingRule::noise:
      if (enough && compute_stats(samples_).rel_noise <= settings_.noise) return say("noise reached");
      break;
    case StoppingRule::entropy:
      if (enough && entropy_flat()) return say("entropy flat");
      break;
    case StoppingRule::samples:
      if (n >= static_cast<std::size_t>(settings_.stopping.samples)) return say("sample count reached");
      break;
  }
  if (elapsed_wall >= settings_.max_time && n >= 1) return say("time cap");
  return false;
}

}  // namespace harness
