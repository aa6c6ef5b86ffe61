#include "harness/check.hpp"

#include <bit>
#include <cmath>
#include <algorithm>
#include <cstring>
#include <vector>

#include <fmt/format.h>

namespace harness {

bool is_poison(float value) { return std::bit_cast<std::uint32_t>(value) == kPoisonBits; }

void poison_host(std::span<float> values) { std::memset(values.data(), kPoisonByte, values.size_bytes()); }
void poison_bytes(std::span<std::byte> bytes) { std::memset(bytes.data(), kPoisonByte, bytes.size()); }

Output::Output(std::string name_, const std::vector<float>& values, bool sampled_)
    : Output(of<float>(std::move(name_), std::span<const float>(values))) {
  sampled = sampled_;
}

std::string CheckResult::summary() const {
  std::string s = fmt::format("max abs err {:.3g}, rel L2 err {:.3g}", max_abs_error, rel_l2_error);
  if (sampled) s += fmt::format(" (sampled {} elements)", elements);
  if (unwritten) s += fmt::format(", {} unwritten", unwritten);
  if (nonfinite) s += fmt::format(", {} NaN/Inf", nonfinite);
  if (mismatches) s += fmt::format(", {} outside tolerance (abs {:g} + rel {:g})", mismatches, tolerance.abs, tolerance.rel);
  if (l2_failures) s += fmt::format(", {} output(s) over their rel L2 bound", l2_failures);
  if (!passed && !worst.empty()) s += "; worst " + worst;
  return s;
}

namespace {

// Accumulates the comparison of one output after another.
struct Checker {
  CheckResult& r;
  double err2 = 0, ref2 = 0, worst_excess = -1;
  bool tolerance_set = false;

  void note_unwritten(const Output& out, std::size_t i) {
    ++r.unwritten;
    if (r.worst.empty() || worst_excess < 0) r.worst = fmt::format("{}[{}] never written", out.name, i);
  }

  // Element i of `got` against element i of `ref`.
  void element(const Output& got, const Output& ref, std::size_t i, const Tolerance& tol) {
    ++r.elements;
    const double rv = ref.value(i);
    const bool floating = is_floating(got.dtype);
    // A float poison pattern is a NaN no arithmetic makes; an integer one is a value a
    // result can hold, so it counts as unwritten only where the reference differs.
    if (got.poisoned(i) && (floating || ref.value(i) != got.value(i))) {
      note_unwritten(got, i);
      return;
    }
    const double gv = got.value(i);
    if (!std::isfinite(gv) || !std::isfinite(rv)) {
      if (!std::isfinite(gv) && !std::isfinite(rv) && std::isnan(gv) == std::isnan(rv) &&
          (std::isnan(gv) || gv == rv))
        return;  // the same NaN or the same infinity
      if (!std::isfinite(gv)) ++r.nonfinite;
      else ++r.mismatches;
      if (r.worst.empty()) r.worst = fmt::format("{}[{}] got {:.9g} want {:.9g}", ref.name, i, gv, rv);
      return;
    }
    const double diff = std::abs(gv - rv);
    r.max_abs_error = std::max(r.max_abs_error, diff);
    err2 += diff * diff;
    ref2 += rv * rv;
    const double allowed = tol.abs + tol.rel * std::abs(rv);
    if (diff > allowed) {
      ++r.mismatches;
      if (diff - allowed > worst_excess) {
        worst_excess = diff - allowed;
        r.worst = fmt::format("{}[{}] got {:.9g} want {:.9g} (|diff| {:.3g} > {:.3g})", ref.name, i, gv, rv, diff, allowed);
      }
    }
  }

  void output(const Output& got, const Output& ref, const Tolerance& fallback) {
    const Tolerance tol = got.tolerance.value_or(ref.tolerance.value_or(is_floating(got.dtype) ? fallback : Tolerance{}));
    if (!tolerance_set && is_floating(got.dtype)) {
      r.tolerance = tol;
      tolerance_set = true;
    }
    const double err2_before = err2, ref2_before = ref2;
    compare_elements(got, ref, tol);
    if (tol.rel_l2 > 0) {  // this output's own ||got - ref|| / ||ref||
      const double e2 = err2 - err2_before, f2 = ref2 - ref2_before;
      const double rel_l2 = f2 > 0 ? std::sqrt(e2 / f2) : std::sqrt(e2);
      if (!(rel_l2 <= tol.rel_l2)) {
        ++r.l2_failures;
        if (r.worst.empty())  // no element out of bounds, unwritten or non-finite to name
          r.worst = fmt::format("{}: rel L2 err {:.3g} > {:g}", ref.name, rel_l2, tol.rel_l2);
      }
    }
  }

  void compare_elements(const Output& got, const Output& ref, const Tolerance& tol) {
    const RowSample& sample = ref.sample.active() ? ref.sample : got.sample;
    if (!sample.active()) {
      for (std::size_t i = 0; i < ref.count(); ++i) element(got, ref, i, tol);
      return;
    }
    // Sampled: the rows in value, then every element of the variant's output for
    // coverage (never written) and finiteness.
    r.sampled = true;
    const auto width = static_cast<std::size_t>(sample.width);
    for (const std::int64_t row : sample.rows)
      for (std::size_t k = 0; k < width; ++k) {
        const std::size_t i = static_cast<std::size_t>(row) * width + k;
        if (i < ref.count()) element(got, ref, i, tol);
      }
    std::vector<bool> compared(got.count() / std::max<std::size_t>(width, 1) + 1, false);
    for (const std::int64_t row : sample.rows)
      if (static_cast<std::size_t>(row) < compared.size()) compared[static_cast<std::size_t>(row)] = true;
    for (std::size_t i = 0; i < got.count(); ++i) {
      if (compared[i / width]) continue;  // counted above
      if (is_floating(got.dtype) && got.poisoned(i)) {
        note_unwritten(got, i);
      } else if (!std::isfinite(got.value(i))) {
        ++r.nonfinite;
        if (r.worst.empty()) r.worst = fmt::format("{}[{}] is {}", got.name, i, got.value(i));
      }
    }
  }
};

}  // namespace

CheckResult compare_outputs(const std::vector<Output>& got, const std::vector<Output>& reference,
                            const Tolerance& tolerance) {
  CheckResult r;
  r.tolerance = tolerance;
  Checker checker{r};
  for (const auto& ref : reference) {
    const Output* g = nullptr;
    for (const auto& o : got)
      if (o.name == ref.name) g = &o;
    if (g) r.sampled |= g->sampled || ref.sampled;
    if (!g || g->data.size() != ref.data.size() || g->dtype != ref.dtype) {
      r.worst = fmt::format("output '{}' missing, of the wrong size or of another dtype", ref.name);
      r.passed = false;
      return r;
    }
    checker.output(*g, ref, tolerance);
  }
  r.rel_l2_error = checker.ref2 > 0 ? std::sqrt(checker.err2 / checker.ref2) : std::sqrt(checker.err2);
  r.passed = r.mismatches == 0 && r.nonfinite == 0 && r.unwritten == 0 && r.l2_failures == 0 && r.elements > 0;
  return r;
}

}  // namespace harness
