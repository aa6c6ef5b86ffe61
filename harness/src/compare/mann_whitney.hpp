#pragma once
// The Mann-Whitney U test (Wilcoxon rank-sum test), two-sided: do two samples come from
// one distribution, or is one stochastically larger than the other?
//
// Small samples (n1 + n2 <= kExactLimit) get the exact permutation distribution of the
// rank sum, ties included (midranks); larger ones the normal approximation with the tie
// correction of the variance and a continuity correction.
#include <cstddef>
#include <span>

namespace harness {

struct MannWhitney {
  std::size_t n1 = 0, n2 = 0;
  double u1 = 0;          // U of the first sample: pairs (a, b) with a > b, ties count 1/2
  double z = 0;           // standardized U1 (normal approximation; also set when exact)
  double p_value = 1;     // two-sided
  bool exact = false;     // p_value from the exact distribution
  // U1 / (n1 n2): the probability that a value of the first sample exceeds one of the
  // second (ties count 1/2). 0.5: no shift.
  double prob_greater = 0.5;
};

inline constexpr std::size_t kMannWhitneyExactLimit = 60;

// Either sample empty: p_value 1. NaNs are not allowed (the caller drops them).
MannWhitney mann_whitney_u(std::span<const double> a, std::span<const double> b);

// The smallest two-sided p-value the exact test can give for sample sizes n1, n2
// (2 / C(n1+n2, n1), capped at 1): when it exceeds alpha no difference can ever be
// significant, and a caller should say so rather than report "same".
double mann_whitney_min_p(std::size_t n1, std::size_t n2);

}  // namespace harness
