#pragma once
// Summary statistics of timing samples.
#include <cstddef>
#include <vector>

#include "types/timing.hpp"

namespace harness {

Stats compute_stats(std::vector<double> samples);
// The p-quantile (0..1) of sorted values, interpolating linearly between ranks.
double quantile_sorted(const std::vector<double>& sorted, double p);

}  // namespace harness
