#include "harness/check.hpp"

#include <bit>
#include <cmath>
#include <cstring>

#include <fmt/format.h>

namespace harness {

bool is_poison(float value) { return std::bit_cast<std::uint32_t>(value) == kPoisonBits; }

void poison_host(std::span<float> values) {
  std::memset(values.data(), kPoisonByte, values.size_bytes());
}

std::string CheckResult::summary() const {
  std::string s = fmt::format("max abs err {:.3g}, rel L2 err {:.3g}", max_abs_error, rel_l2_error);
  if (sampled) s += fmt::format(" (sampled {} elements)", elements);
  if (unwritten) s += fmt::format(", {} unwritten", unwritten);
  if (nonfinite) s += fmt::format(", {} NaN/Inf", nonfinite);
  if (mismatches) s += fmt::format(", {} outside tolerance (abs {:g} + rel {:g})", mismatches, tolerance.abs, tolerance.rel);
  if (!passed && !worst.empty()) s += "; worst " + worst;
  return s;
}

CheckResult compare_outputs(const std::vector<Output>& got, const std::vector<Output>& reference,
                            const Tolerance& tolerance) {
  CheckResult r;
  r.tolerance = tolerance;
  double err2 = 0, ref2 = 0;
  double worst_excess = -1;
  std::string problem_output;
  for (const auto& ref : reference) {
    const Output* g = nullptr;
    for (const auto& o : got)
      if (o.name == ref.name) g = &o;
    if (g) r.sampled |= g->sampled || ref.sampled;
    if (!g || g->values.size() != ref.values.size()) {
      r.worst = fmt::format("output '{}' missing or of the wrong size", ref.name);
      r.passed = false;
      return r;
    }
    for (std::size_t i = 0; i < ref.values.size(); ++i) {
      const float gv = g->values[i];
      const double rv = ref.values[i];
      ++r.elements;
      if (is_poison(gv)) {
        ++r.unwritten;
        if (r.worst.empty() || worst_excess < 0) r.worst = fmt::format("{}[{}] never written", ref.name, i);
        continue;
      }
      if (!std::isfinite(gv)) {
        if (!std::isfinite(rv) && std::isnan(gv) == std::isnan(rv)) continue;  // both Inf or both NaN
        ++r.nonfinite;
        if (r.worst.empty()) r.worst = fmt::format("{}[{}] got {} want {:.6g}", ref.name, i, gv, rv);
        continue;
      }
      const double diff = std::abs(static_cast<double>(gv) - rv);
      r.max_abs_error = std::max(r.max_abs_error, diff);
      err2 += diff * diff;
      ref2 += rv * rv;
      const double allowed = tolerance.abs + tolerance.rel * std::abs(rv);
      if (diff > allowed) {
        ++r.mismatches;
        if (diff - allowed > worst_excess) {
          worst_excess = diff - allowed;
          r.worst = fmt::format("{}[{}] got {:.9g} want {:.9g} (|diff| {:.3g} > {:.3g})", ref.name, i, gv, rv, diff, allowed);
        }
      }
    }
  }
  r.rel_l2_error = ref2 > 0 ? std::sqrt(err2 / ref2) : std::sqrt(err2);
  r.passed = r.mismatches == 0 && r.nonfinite == 0 && r.unwritten == 0 && r.elements > 0;
  return r;
}

}  // namespace harness
