#pragma once
// Summary statistics of timing samples.
#include <cstddef>
#include <vector>

namespace harness {

struct Stats {
  std::size_t count = 0;
  double min = 0, max = 0, mean = 0, median = 0, stddev = 0;
  double q1 = 0, q3 = 0;     // first and third quartiles (linear interpolation)
  double rel_noise = 0;      // stddev / mean
};

Stats compute_stats(std::vector<double> samples);
// The p-quantile (0..1) of sorted values, interpolating linearly between ranks.
double quantile_sorted(const std::vector<double>& sorted, double p);

}  // namespace harness
