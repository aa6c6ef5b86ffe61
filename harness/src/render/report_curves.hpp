#pragma once
// Series a result records per step (a training loss), read from its `extra` and shown by
// `harness report`: per configuration one line chart (HTML) and a small table (markdown
// and HTML) with one row per variant.
//
// Key convention (any problem, any tool writing the report format):
//   extra.<name>_curve         array of numbers: the value at steps 0, s, 2s, ... (JSON null
//                              for a value that was not finite; it is left out)
//   extra.<name>_curve_stride  s, a positive integer (default 1)
// e.g. train_transformer and reports/pytorch_transformer.py write loss_curve and
// loss_curve_stride. A configuration is the result's problem and parameters without the
// variant, so the engine's results and PyTorch's of the same shape share a chart.
#include <cstddef>
#include <string>
#include <vector>

#include "render/report_svg.hpp"
#include "types/result.hpp"

namespace harness {

struct Curve {
  std::string name;            // "loss" for extra.loss_curve
  std::vector<double> values;  // NaN where the report has null
  std::size_t stride = 1;
  // The step of values[i], and the last recorded step.
  double step(std::size_t i) const { return static_cast<double>(i * stride); }
  double last_step() const { return values.empty() ? 0 : step(values.size() - 1); }
};

// Every curve in r.extra (by key, in alphabetical order); none when extra is not an
// object or no key follows the convention (an array with no number is no curve).
std::vector<Curve> curves_of(const Result& r);

// One chart / table: one curve name of one configuration, a member per result.
struct CurveGroup {
  std::string problem, name;
  std::string config;  // the parameters that differ between the problem's configurations ("" if one)
  std::string fixed;   // those that are the same in all of them ("batch=100, heads=8")
  struct Member {
    // The variant; when it appears more than once in the group (several reports): with its
    // source ("ours (2025-06-01 12:00 abc1234)"), or without sources "ours (2)" from the second on.
    std::string label;
    const Result* result = nullptr;
    Curve curve;
  };
  std::vector<Member> members;
};

// The groups of `rows` in report order (first appearance of problem, configuration, name).
// `sources`: empty, or a label per row (the run of a history) that tells repeated variants apart.
std::vector<CurveGroup> curve_groups(const std::vector<const Result*>& rows, const std::vector<std::string>& sources = {});
std::vector<CurveGroup> curve_groups(const std::vector<Result>& rows);

// The summary table of a group: the value at step 0, at 25/50/75% of the longest curve's
// steps (the recorded step at or before; "-" past a curve's end), the last value, and the
// mean of the last 10% of the recorded values (at least one).
struct CurveTable {
  std::vector<std::string> head;                                     // after "variant"
  std::vector<std::pair<std::string, std::vector<std::string>>> rows;  // label, cells
};
CurveTable curve_table(const CurveGroup& group);

// What the markdown and HTML say about these tables (also the --help text).
inline constexpr const char* kCurveTableDescription =
    "the value at step 0 and at 25/50/75% of the longest curve's steps, the last value and its step, and the mean "
    "of the last 10% of the recorded values";

// Markdown: after a problem's table, per configuration "**loss** per step" and the table
// of curve_table, for that problem's results (nothing when they have no curves).
std::string curve_tables_markdown(const std::vector<const Result*>& rows);
// HTML: the section "Curves per step" (<h2 id="curves">): one line chart per group (x: step,
// one line per variant, colors from `colors`) with its table under it; "" when no result
// has a curve (the page has no such section).
std::string curve_section_html(const std::vector<const Result*>& rows, svg::ColorMap& colors,
                               const std::vector<std::string>& sources = {});
std::string curve_section_html(const std::vector<Result>& rows, svg::ColorMap& colors);

}  // namespace harness
