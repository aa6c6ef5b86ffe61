#pragma once
// The ratio of two results' medians with a 95% confidence interval, from a deterministic
// percentile bootstrap over their samples. Used by the report pages (speed against a
// `--reference` variant) and the console's end-of-run summary.
//
// Method: for b = 1..B (B = 2000) draw n_a samples of A and n_b samples of B with
// replacement (each side independently: the two results are independent runs), take
// r_b = median(A*_b) / median(B*_b); the interval is the 2.5% and 97.5% quantiles of the
// r_b (the percentile bootstrap; Efron & Tibshirani ch. 13). The generator is splitmix64
// with a fixed seed and an index drawn as u64 mod n, so the same samples give
// the same interval on every machine and every run (std::uniform_int_distribution is not
// specified bit-exactly across standard libraries).
//
// The point estimate is the ratio of the full samples' medians (not the bootstrap's
// mean). Fewer than kMinIntervalSamples samples on either side: no interval (a bootstrap
// of 1-4 values only reshuffles them).
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

namespace harness {

inline constexpr std::size_t kMinIntervalSamples = 5;
inline constexpr int kBootstrapResamples = 2000;
inline constexpr std::uint64_t kBootstrapSeed = 0x5eed'b007'57a9'0001ULL;

struct RatioInterval {
  double ratio = 0;  // median(a) / median(b)
  double lo = 0;     // 2.5% quantile of the bootstrap ratios
  double hi = 0;     // 97.5% quantile
};

// median(a) / median(b) with its 95% interval; nullopt when either side has fewer than
// kMinIntervalSamples samples or a median <= 0.
std::optional<RatioInterval> median_ratio_interval(const std::vector<double>& a, const std::vector<double>& b,
                                                   int resamples = kBootstrapResamples,
                                                   std::uint64_t seed = kBootstrapSeed);

}  // namespace harness
