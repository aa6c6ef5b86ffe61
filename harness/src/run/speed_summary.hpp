#pragma once
// The end-of-run summary in hyperfine's style: for every shape that several variants ran
// (same problem, same parameters, same device, same case), the fastest variant and each
// other's speed relative to it with its spread:
//
//   gemm M=8192 N=8192 K=8192 alpha=1 beta=0 dtype=bf16 layout=nn
//     cublas ran
//       1.02 ± 0.08 times faster than wgmma
//
// ratio = median(other) / median(fastest); the ± is one standard deviation propagated from
// each side's spread (sigma ~ interquartile range / 1.349, relative to the median):
// sigma_ratio = ratio * sqrt(s_fast^2 + s_other^2), as hyperfine propagates its
// stddevs. A result that was not timed, or is marked suspicious or outside the timed
// region (issue 33), takes no part: its figure is not to be trusted.
//
// Where both results have at least 5 samples, the line also gives the ratio's 95%
// confidence interval from a deterministic bootstrap over the two results' samples
// (measure/ratio_interval.hpp), which unlike the ± assumes no distribution:
//
//       1.02 ± 0.08 times faster than wgmma (95% CI 1.01-1.04)
#include <optional>
#include <string>
#include <vector>

#include "measure/ratio_interval.hpp"
#include "types/result.hpp"

namespace harness {

struct SpeedRatio {
  std::string variant;  // the slower variant
  double ratio = 0;     // its median / the fastest median (>= 1)
  double sigma = 0;     // one standard deviation of the ratio
  std::optional<RatioInterval> interval;  // 95% bootstrap interval (>= 5 samples each)
};

struct SpeedGroup {
  std::string shape;    // "gemm M=8192 ..." (device appended where the run used several)
  std::string fastest;
  std::vector<SpeedRatio> slower;  // fastest first
};

std::vector<SpeedGroup> speed_summary(const std::vector<Result>& results);
// The groups as text, hyperfine's layout ("" when there is none).
std::string speed_summary_text(const std::vector<SpeedGroup>& groups);

}  // namespace harness
