#include "measure/ratio_interval.hpp"

#include <algorithm>
#include <cmath>

namespace harness {
namespace {

// splitmix64 (Steele, Lea & Flood 2014): a tiny generator whose output is fixed by its
// definition, so the interval is reproducible everywhere.
struct SplitMix64 {
  std::uint64_t state;
  std::uint64_t next() {
    std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  // An index in [0, n): x mod n (the modulo bias is below n / 2^64, far under anything a
  // 2000-draw bootstrap resolves).
  std::size_t index(std::size_t n) { return static_cast<std::size_t>(next() % n); }
};

// The median of `v` (reordered in place): the middle value, or the mean of the two middle
// values for an even count, as measure/stats computes it.
double median_in_place(std::vector<double>& v) {
  const std::size_t m = v.size() / 2;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(m), v.end());
  const double hi = v[m];
  if (v.size() % 2) return hi;
  const double lo = *std::max_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(m));
  return (lo + hi) / 2;
}

double resampled_median(const std::vector<double>& x, std::vector<double>& buf, SplitMix64& rng) {
  buf.resize(x.size());
  for (auto& v : buf) v = x[rng.index(x.size())];
  return median_in_place(buf);
}

// The q-quantile of sorted `v` with linear interpolation between order statistics.
double quantile_sorted(const std::vector<double>& v, double q) {
  const double pos = q * static_cast<double>(v.size() - 1);
  const auto i = static_cast<std::size_t>(std::floor(pos));
  if (i + 1 >= v.size()) return v.back();
  return v[i] + (pos - static_cast<double>(i)) * (v[i + 1] - v[i]);
}

}  // namespace

std::optional<RatioInterval> median_ratio_interval(const std::vector<double>& a, const std::vector<double>& b,
                                                   int resamples, std::uint64_t seed) {
  if (a.size() < kMinIntervalSamples || b.size() < kMinIntervalSamples || resamples < 2) return std::nullopt;
  std::vector<double> buf(a);
  const double ma = median_in_place(buf);
  buf = b;
  const double mb = median_in_place(buf);
  if (!(ma > 0) || !(mb > 0)) return std::nullopt;
  SplitMix64 rng{seed};
  std::vector<double> ratios;
  ratios.reserve(static_cast<std::size_t>(resamples));
  for (int i = 0; i < resamples; ++i) {
    const double ra = resampled_median(a, buf, rng);
    const double rb = resampled_median(b, buf, rng);
    if (rb > 0) ratios.push_back(ra / rb);
  }
  if (ratios.size() < 2) return std::nullopt;
  std::sort(ratios.begin(), ratios.end());
  return RatioInterval{ma / mb, quantile_sorted(ratios, 0.025), quantile_sorted(ratios, 0.975)};
}

}  // namespace harness
