#pragma once
// Stopping rules: when to stop taking timed samples of one result.
//
//   noise    (default) at least min_samples and min_time of samples, and the relative
//            noise stddev/mean at most the target.
//   entropy  nvbench's entropy criterion: H_k = -sum_v p_v log2 p_v is the entropy of
//            the empirical distribution of the first k samples (each distinct value its
//            own bin). While the distribution is still being discovered H_k climbs; once
//            new samples only repeat its shape, H_k flattens. A least-squares line
//            h(i) = a + b i is fitted to the last 300 entropies; the rule holds (checked at
//            even k, after min_samples) when the line is flat, atan(b) <= max_angle
//            degrees (default 0.048), and fits, r^2 >= min_r2 (default 0.36; r^2 = 1 for a
//            constant sequence).
//   samples  exactly `samples` samples.
// Every rule also stops at max_time of wall time ("time cap") and at 10000 samples
// ("sample cap"); the report says which rule stopped each result and why.
#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "types/settings.hpp"

namespace harness {

// Fed one sample at a time; says when to stop and why.
class StoppingCriterion {
 public:
  explicit StoppingCriterion(const MeasureSettings& settings);
  void add(double sample);
  // Whether to stop after `elapsed_wall` seconds of measuring; `reason` says why
  // ("noise reached", "entropy flat", "sample count reached", "time cap", "sample cap").
  bool finished(double elapsed_wall, std::string* reason);
  const std::vector<double>& samples() const { return samples_; }
  double entropy() const;  // of the samples so far

 private:
  bool entropy_flat() const;
  const MeasureSettings& settings_;
  std::vector<double> samples_;
  double total_ = 0;
  std::vector<std::pair<double, std::int64_t>> frequencies_;  // sorted by value
  std::deque<double> entropies_;                               // the last kEntropyWindow
};

// Linear least squares over y(0..n-1): slope, intercept and r^2 (1 when y is constant).
struct LineFit {
  double slope = 0, intercept = 0, r2 = 1;
};
LineFit fit_line(const std::deque<double>& y);

}  // namespace harness
