#pragma once
// `harness compare`: a baseline report against a candidate report, result by result.
//
// Results are matched by problem + variant + parameters (harness reports) or by the
// benchmark's run name (Google Benchmark JSON). Each pair gets a verdict. A change counts
// only when the effect is large enough AND statistically significant:
//  - effect: the median time moves by at least `threshold` (relative), and the samples
//    are separated: Cliff's delta (the rank-biserial correlation, 2 P(cand > base) - 1,
//    ties counting 1/2) is at least `min_effect_size` in the same direction. Runs with
//    thousands of samples make any shift "significant"; this keeps a noisy, overlapping
//    pair whose median wandered past the threshold `same`.
//  - significance: a two-sided Mann-Whitney U test on the samples rejects "same
//    distribution" at level `alpha` (exact for small samples).
// Two runs of one build therefore come out `same`, and a real slowdown with tight noise
// comes out `slower`. With too few samples for the test (or aggregates only) the
// threshold alone decides, and the note says so.
//
// A pair that would be slower or faster is `ambiguous` instead when the runs cannot decide
// it (docs/measurement.md, "compare"): the two runs' interquartile ranges (scaled by
// spread_k around their medians) overlap (robust: an outlier sample does not move them); or the
// SM clocks the runs recorded (clocks.median_mhz) differ by more than max_clock_change; or
// one run was throttled and the other not. Ambiguous is no regression unless
// fail_on_ambiguous (--fail-on ambiguous).
#include <optional>
#include <regex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "report/report_model.hpp"

namespace harness {

// suspicious: a result was marked suspicious (faster than the device's roof) or did work
// outside the timed region (issue 33): a marked candidate is never faster, an honest one
// never slower than a marked baseline. Not a regression (a marked candidate that is slower
// all the same stays `slower`, one faster than a marked baseline stays `faster`).
enum class Verdict { faster, slower, same, new_, missing, failed, skipped, ambiguous, suspicious };
std::string_view to_string(Verdict v);

struct CompareOptions {
  double threshold = 0.05;   // minimum relative change of the median (0.05 = 5%)
  double alpha = 0.05;       // significance level of the U test
  double min_effect_size = 0.3;  // smallest |Cliff's delta| that counts (0: off)
  bool fail_on_missing = false;
  double spread_k = 1.0;          // ambiguous: the runs' [q1, q3] (scaled by spread_k around the medians) overlap
  double max_clock_change = 0.05; // ambiguous: SM clock medians differ by more (relative)
  bool fail_on_ambiguous = false; // --fail-on ambiguous: an ambiguous pair is a regression
  std::optional<std::regex> filter;  // compare only benchmarks whose name matches (search)
};

struct Pair {
  std::string key, name, problem, variant;
  std::string display;       // the name without the parameters common to its problem

  nlohmann::json params = nlohmann::json::object();
  Verdict verdict = Verdict::same;
  bool regression = false;
  std::optional<double> base_median, cand_median;   // seconds
  std::optional<double> change;                     // cand/base - 1 (time: + is slower)
  std::optional<double> p_value;
  std::optional<double> effect_size;                // Cliff's delta: + candidate slower
  bool exact_test = false;
  std::size_t base_n = 0, cand_n = 0;
  std::string note;          // why a verdict was reached where it is not obvious
};

struct ProblemSummary {
  std::string problem;
  std::string fixed_params;         // "alpha=1 beta=0": the same in every pair of the problem
  std::size_t compared = 0;         // pairs timed on both sides
  double geomean_ratio = 1;         // geometric mean of cand/base time over them
  std::size_t faster = 0, slower = 0, same = 0, new_ = 0, missing = 0, failed = 0, skipped = 0, ambiguous = 0, suspicious = 0;
};

struct Comparison {
  CompareOptions options;
  std::string base_path, cand_path, base_label, cand_label;
  std::vector<std::string> warnings;
  std::vector<Pair> pairs;                 // baseline order, then the new entries
  std::vector<ProblemSummary> problems;    // in order of first appearance
  ProblemSummary total;                    // problem "all"
  bool regression = false;
};

// Reports as decode_report returns them. Throws InputError for a report with entries
// that could not be decoded (Report::errors), or with a timed result whose median, quartiles,
// samples or SM clock are not finite (or negative): "<path>: result '<name>': ...".
Comparison compare(const Report& base, const Report& cand, const CompareOptions& options);

}  // namespace harness
