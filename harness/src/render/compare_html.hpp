#pragma once
// `harness compare A.json B.json --format html`: the comparison as one self-contained page
// (no scripts): the exit code compare returns, the per-problem geometric mean of
// candidate/baseline time (table and bars), every result's verdict with its change and
// confidence sorted by effect (failures and regressions first), and the two environments
// side by side with the differing entries highlighted.
#include <string>

#include "compare/compare.hpp"

namespace harness {

std::string render_comparison_html(const Comparison& c, const Report& base, const Report& cand);

// The exit code `harness compare` returns for this comparison (0 or 1).
int comparison_exit_code(const Comparison& c);

}  // namespace harness
