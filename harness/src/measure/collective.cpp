// The arithmetic of collective timing (collective.hpp): K per size, the ranks combined,
// the bandwidths. No CUDA here, so that tests run it anywhere.
#include "measure/collective.hpp"

#include <algorithm>
#include <cmath>

#include "measure/stats.hpp"

namespace harness {

std::size_t collective_ops_per_sample(double bytes) {
  if (!std::isfinite(bytes) || bytes < 0) bytes = 0;
  const double cost = kCollectiveOpLatency + bytes / kCollectiveBandwidth;
  const double k = std::ceil(kCollectiveBatchSeconds / cost);
  if (k <= static_cast<double>(kCollectiveMinOps)) return kCollectiveMinOps;
  if (k >= static_cast<double>(kCollectiveMaxOps)) return kCollectiveMaxOps;
  return static_cast<std::size_t>(k);
}

RankCombination combine_ranks(const std::vector<std::vector<double>>& samples_per_rank) {
  RankCombination c;
  if (samples_per_rank.empty()) return c;
  std::size_t batches = samples_per_rank.front().size();
  for (const auto& s : samples_per_rank) batches = std::min(batches, s.size());
  for (const auto& s : samples_per_rank) c.rank_median.push_back(s.empty() ? 0.0 : compute_stats(s).median);
  if (batches == 0) return c;
  const double n = static_cast<double>(samples_per_rank.size());
  for (std::size_t i = 0; i < batches; ++i) {
    double sum = 0, worst = 0;
    for (const auto& s : samples_per_rank) {
      sum += s[i];
      worst = std::max(worst, s[i]);
    }
    c.mean.push_back(sum / n);
    c.slowest.push_back(worst);
  }
  c.time_s = compute_stats(c.mean).median;
  c.time_max_s = compute_stats(c.slowest).median;
  return c;
}

Bandwidth collective_bandwidth(double bytes, double seconds, double bus_factor) {
  Bandwidth b;
  if (!(seconds > 0) || !(bytes > 0)) return b;
  b.algbw_gbps = bytes / seconds / 1e9;
  b.busbw_gbps = b.algbw_gbps * bus_factor;
  return b;
}

}  // namespace harness
