#include "compare/mann_whitney.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

namespace harness {

namespace {

// Twice the midranks (integers) of the pooled values; the first n1 belong to sample a.
// Also returns sum(t^3 - t) over tie groups, for the variance correction.
struct Ranks {
  std::vector<long> twice_rank;
  double tie_term = 0;
};

Ranks rank_pooled(std::span<const double> a, std::span<const double> b) {
  const std::size_t n = a.size() + b.size();
  std::vector<std::pair<double, std::size_t>> pooled;
  pooled.reserve(n);
  for (std::size_t i = 0; i < a.size(); ++i) pooled.emplace_back(a[i], i);
  for (std::size_t i = 0; i < b.size(); ++i) pooled.emplace_back(b[i], a.size() + i);
  std::sort(pooled.begin(), pooled.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
  Ranks r;
  r.twice_rank.assign(n, 0);
  std::size_t i = 0;
  while (i < n) {
    std::size_t j = i + 1;
    while (j < n && pooled[j].first == pooled[i].first) ++j;
    // Ranks i+1 .. j share the midrank (i+1+j)/2; twice that is an integer.
    const long twice = static_cast<long>(i + 1 + j);
    for (std::size_t k = i; k < j; ++k) r.twice_rank[pooled[k].second] = twice;
    const double t = static_cast<double>(j - i);
    r.tie_term += t * t * t - t;
    i = j;
  }
  return r;
}

// Exact two-sided p-value: the distribution of (twice) the rank sum of n1 values drawn
// without replacement from the pooled (twice) ranks, by dynamic programming over the
// pooled values: ways[k][s] = number of k-subsets with rank sum s.
double exact_p(const Ranks& r, std::size_t n1, long observed_twice_sum) {
  const std::size_t n = r.twice_rank.size();
  const long total = std::accumulate(r.twice_rank.begin(), r.twice_rank.end(), 0L);
  const auto width = static_cast<std::size_t>(total + 1);
  std::vector<double> ways((n1 + 1) * width, 0.0);
  auto at = [&](std::size_t k, long s) -> double& { return ways[k * width + static_cast<std::size_t>(s)]; };
  at(0, 0) = 1;
  long reach = 0;  // largest sum reachable so far
  for (std::size_t i = 0; i < n; ++i) {
    const long w = r.twice_rank[i];
    reach += w;
    for (std::size_t k = std::min(n1, i + 1); k >= 1; --k)
      for (long s = reach; s >= w; --s) at(k, s) += at(k - 1, s - w);
  }
  double all = 0, low = 0, high = 0;
  for (long s = 0; s <= total; ++s) {
    const double c = at(n1, s);
    all += c;
    if (s <= observed_twice_sum) low += c;
    if (s >= observed_twice_sum) high += c;
  }
  if (all <= 0) return 1;
  return std::min(1.0, 2 * std::min(low, high) / all);
}

}  // namespace

double mann_whitney_min_p(std::size_t n1, std::size_t n2) {
  if (n1 == 0 || n2 == 0) return 1;
  // C(n1+n2, n1) grows quickly: stop once 2/C is far below any sensible alpha.
  double c = 1;
  const std::size_t k = std::min(n1, n2), n = n1 + n2;
  for (std::size_t i = 1; i <= k; ++i) {
    c = c * static_cast<double>(n - k + i) / static_cast<double>(i);
    if (c > 1e12) return 2 / c;
  }
  return std::min(1.0, 2 / c);
}

MannWhitney mann_whitney_u(std::span<const double> a, std::span<const double> b) {
  MannWhitney m;
  m.n1 = a.size();
  m.n2 = b.size();
  if (a.empty() || b.empty()) return m;
  const Ranks r = rank_pooled(a, b);
  long twice_r1 = 0;
  for (std::size_t i = 0; i < a.size(); ++i) twice_r1 += r.twice_rank[i];
  const double n1 = static_cast<double>(m.n1), n2 = static_cast<double>(m.n2), n = n1 + n2;
  m.u1 = static_cast<double>(twice_r1) / 2 - n1 * (n1 + 1) / 2;
  m.prob_greater = m.u1 / (n1 * n2);

  const double mean = n1 * n2 / 2;
  const double var = n1 * n2 / 12 * ((n + 1) - r.tie_term / (n * (n - 1)));
  if (var <= 0) {  // every value equal
    m.z = 0;
    m.p_value = 1;
    m.exact = true;
    return m;
  }
  const double sd = std::sqrt(var);
  m.z = (m.u1 - mean) / sd;
  if (m.n1 + m.n2 <= kMannWhitneyExactLimit) {
    m.exact = true;
    m.p_value = exact_p(r, m.n1, twice_r1);
    return m;
  }
  // Continuity correction: U moves in steps of 1/2 with ties, 1 without; 0.5 is the
  // customary (conservative) choice.
  const double dist = std::max(0.0, std::fabs(m.u1 - mean) - 0.5);
  m.p_value = std::min(1.0, std::erfc(dist / sd / std::sqrt(2.0)));
  return m;
}

}  // namespace harness
