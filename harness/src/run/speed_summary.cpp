#include "run/speed_summary.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include <fmt/format.h>

namespace harness {
namespace {

bool comparable(const Result& r) {
  return r.status == Status::passed && r.timing && r.timing->stats.median > 0 && !r.integrity.suspicious &&
         !r.integrity.outside;
}

// The relative spread of a result's samples: IQR / 1.349 (a normal's sigma) / median.
double relative_sigma(const Stats& s) {
  if (!s.has_noise() || s.median <= 0) return 0;
  return (s.q3 - s.q1) / 1.349 / s.median;
}

}  // namespace

std::vector<SpeedGroup> speed_summary(const std::vector<Result>& results) {
  // A suite may hold one shape in several cases (gemm-tensor-cores: 4096^3 in `square` and
  // `layouts`): each case is its own group, so that a variant is never compared with its
  // own second run; such a shape's line names its case.
  auto shape_of = [](const Result& r) {
    std::string key = r.problem + " " + r.params.describe();
    if (!r.device.empty()) key += " [" + r.device + "]";
    return key;
  };
  std::map<std::string, std::set<std::string>> cases_of_shape;
  for (const auto& r : results)
    if (comparable(r)) cases_of_shape[shape_of(r)].insert(r.case_name);
  std::map<std::string, std::vector<const Result*>> by_shape;
  std::vector<std::string> order;  // shapes in the order they first ran
  for (const auto& r : results) {
    if (!comparable(r)) continue;
    std::string key = shape_of(r);
    if (cases_of_shape[key].size() > 1) key += " (case " + r.case_name + ")";
    auto& v = by_shape[key];
    if (v.empty()) order.push_back(key);
    v.push_back(&r);
  }
  std::vector<SpeedGroup> out;
  for (const auto& key : order) {
    auto rows = by_shape[key];
    if (rows.size() < 2) continue;
    std::stable_sort(rows.begin(), rows.end(), [](const Result* a, const Result* b) {
      return a->timing->stats.median < b->timing->stats.median;
    });
    SpeedGroup g;
    g.shape = key;
    g.fastest = rows.front()->variant;
    const Stats& f = rows.front()->timing->stats;
    for (std::size_t i = 1; i < rows.size(); ++i) {
      const Stats& s = rows[i]->timing->stats;
      const double ratio = s.median / f.median;
      const double sigma = ratio * std::hypot(relative_sigma(f), relative_sigma(s));
      g.slower.push_back(
          {rows[i]->variant, ratio, sigma, median_ratio_interval(rows[i]->timing->samples, rows[0]->timing->samples)});
    }
    out.push_back(std::move(g));
  }
  return out;
}

std::string speed_summary_text(const std::vector<SpeedGroup>& groups) {
  std::string o;
  for (const auto& g : groups) {
    o += fmt::format("{}\n  {} ran\n", g.shape, g.fastest);
    for (const auto& s : g.slower) {
      o += fmt::format("    {:.2f} ± {:.2f} times faster than {}", s.ratio, s.sigma, s.variant);
      if (s.interval) o += fmt::format(" (95% CI {:.2f}-{:.2f})", s.interval->lo, s.interval->hi);
      o += "\n";
    }
  }
  return o;
}

}  // namespace harness
