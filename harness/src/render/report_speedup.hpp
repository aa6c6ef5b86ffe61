#pragma once
// Speed against a reference variant (`harness report --reference cublas`): per case, a
// grouped horizontal bar chart of each variant's speed as a share of the reference's at
// the same shape (reference median time / variant median time: 1 = as fast, 0.5 = half
// as fast, 2 = twice), and per problem a table of each variant's geometric mean share
// over every shape both timed.
#include <optional>
#include <string>
#include <vector>

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
void check_reference(const Report& report, const std::string& reference);

// Per problem (report order) and variant (first appearance), problems without a
// reference left out.
std::vector<VariantGeomean> speedup_geomeans(const Report& report, const std::string& reference);

// The HTML section: charts per case and the geometric-mean table; a note when no problem
// has the reference.
std::string speedup_section_html(const Report& report, const std::string& reference, svg::ColorMap& colors);

}  // namespace harness
