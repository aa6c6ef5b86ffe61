#pragma once
// Speed against a reference variant (`harness report --reference cublas`): per case, a
// grouped horizontal bar chart of each variant's speed as a share of the reference's at
// the same shape (reference median time / variant median time: 1 = as fast, 0.5 = half
// as fast, 2 = twice), and per problem a table of each variant's geometric mean share
// over every shape both timed.
//
// Each share carries a 95% confidence interval where both results have at least 5
// samples: a deterministic percentile bootstrap (2000 resamples, fixed seed) of
// median(reference samples) / median(variant samples) (measure/ratio_interval.hpp).
// md and html write it `1.03x (0.99-1.06)`, csv as two more columns.
#include <optional>
#include <string>
#include <vector>

#include "measure/ratio_interval.hpp"
#include "report/report_model.hpp"
#include "render/report_svg.hpp"

namespace harness {

struct VariantGeomean {
  std::string problem, reference, variant;
  double geomean = 0;          // of reference_time / variant_time over the shapes
  double min = 0, max = 0;
  std::size_t shapes = 0;      // shapes where both were timed
};

// The reference of a problem: `reference` when its results have that variant, "" when
// `reference` is "none"; with `reference` empty the vendor variant (html::vendor_variant).
std::string reference_for(const std::vector<const Result*>& rows, const std::string& reference);

// One result's speed as a share of the reference's at the same shape (reference median
// time / its median time), when both were timed: the ratio column of md and csv.
std::optional<double> reference_share(const Result& r, const std::vector<const Result*>& rows, const std::string& ref);

// `--reference VARIANT` names a variant of the report ("" and "none" always do): else an
// InputError with a did-you-mean from the report's variants.
// The share with its 95% bootstrap interval (none for the reference itself, or with
// fewer than 5 samples on either side).
struct ReferenceRatio {
  double share = 0;
  std::optional<RatioInterval> interval;
};
std::optional<ReferenceRatio> reference_ratio(const Result& r, const std::vector<const Result*>& rows,
                                              const std::string& ref);
// "1.03x (0.99-1.06)", or "1.03x" without an interval.
std::string reference_ratio_text(const ReferenceRatio& ratio);

void check_reference(const Report& report, const std::string& reference);

// Per problem (report order) and variant (first appearance), problems without a
// reference left out.
std::vector<VariantGeomean> speedup_geomeans(const Report& report, const std::string& reference);

// The HTML section: charts per case and the geometric-mean table; a note when no problem
// has the reference.
std::string speedup_section_html(const Report& report, const std::string& reference, svg::ColorMap& colors);

}  // namespace harness
