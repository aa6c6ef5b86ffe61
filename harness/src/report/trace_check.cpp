#include "report/trace_check.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include <fmt/format.h>

#include "profile/nvtx.hpp"

namespace harness {

namespace {

using nlohmann::json;

// Timestamps are microseconds with nanosecond fractions: 1 ns of slack for rounding.
constexpr double kSlackUs = 1e-3;

struct Slice {
  std::string name, cat;
  double ts = 0, end = 0;
};

// The phase a range of category `cat` must sit in ("" where any parent will do).
std::string parent_phase(const std::string& cat) {
  if (cat == "case") return "suite";
  if (cat == "variant") return "case";
  if (cat == "check" || cat == "warmup" || cat == "timed" || cat == "profile") return "variant";
  return "";
}

double num(const json& e, const char* key) {
  const auto it = e.find(key);
  return it != e.end() && it->is_number() ? it->get<double>() : std::nan("");
}

// Where check_trace records what it finds (the first 50).
struct Problems {
  TraceCheck& out;
  void operator()(std::string text) const {
    if (out.problems.size() < 50) out.problems.push_back(std::move(text));
  }
};

// The trace's events sorted by kind.
struct Scan {
  std::vector<Slice> ranges;
  std::map<std::string, std::vector<Slice>> variant_ranges;  // by name
  std::map<std::string, std::size_t> kernels_by_variant;
  std::set<double> flow_starts;
  std::vector<double> flow_ends;
  std::vector<std::pair<Slice, std::string>> gpu;            // GPU slice, its variant range
};

Scan scan_events(const json& trace, TraceCheck& out, const Problems& problem) {
  Scan sc;
  for (const json& e : trace["traceEvents"]) {
    const std::string ph = e.value("ph", "");
    const int pid = e.value("pid", 0), tid = e.value("tid", 0);
    if (ph == "s" || ph == "f") {
      const double id = num(e, "id");
      if (std::isnan(id)) problem(fmt::format("flow event without a numeric id: {}", e.dump()));
      else if (ph == "s") sc.flow_starts.insert(id);
      else sc.flow_ends.push_back(id);
      continue;
    }
    if (ph != "X") continue;
    Slice s{e.value("name", ""), e.value("cat", ""), num(e, "ts"), 0};
    const double dur = num(e, "dur");
    if (std::isnan(s.ts) || std::isnan(dur) || dur < 0) {
      problem(fmt::format("'{}': complete event without ts or with negative dur", s.name));
      continue;
    }
    s.end = s.ts + dur;
    if (pid == 1 && tid == 1) {
      sc.ranges.push_back(s);
      if (s.cat == "variant") sc.variant_ranges[s.name].push_back(s);
    } else if (pid == 2) {
      ++out.gpu_events;
      const std::string variant = e.contains("args") ? e["args"].value("variant", "") : "";
      if (s.cat == "kernel") {
        ++out.kernels;
        ++sc.kernels_by_variant[variant];
      }
      sc.gpu.emplace_back(s, variant);
    }
  }
  return sc;
}

// Nesting: sorted by start (longer first on ties), each range inside the innermost open
// one or after it.
void check_nesting(std::vector<Slice> ranges, const Problems& problem) {
  std::stable_sort(ranges.begin(), ranges.end(), [](const Slice& a, const Slice& b) {
    return a.ts < b.ts || (a.ts == b.ts && a.end > b.end);
  });
  std::vector<const Slice*> stack;
  for (const Slice& s : ranges) {
    while (!stack.empty() && s.ts >= stack.back()->end) stack.pop_back();
    if (!stack.empty() && s.end > stack.back()->end + kSlackUs)
      problem(fmt::format("range '{}' [{:.3f}, {:.3f}] us overlaps '{}' [{:.3f}, {:.3f}] us without nesting", s.name,
                          s.ts, s.end, stack.back()->name, stack.back()->ts, stack.back()->end));
    const std::string want = parent_phase(s.cat);
    const std::string got = stack.empty() ? "" : stack.back()->cat;
    if (!want.empty() && got != want)
      problem(fmt::format("{} range '{}' sits in {} instead of a {} range", s.cat, s.name,
                          got.empty() ? "no range" : "a " + got + " range", want));
    stack.push_back(&s);
  }
}

// Alignment: each GPU slice inside a range of its variant.
void check_alignment(const Scan& sc, const Problems& problem) {
  for (const auto& [s, variant] : sc.gpu) {
    if (variant.empty()) {
      problem(fmt::format("{} '{}' at {:.3f} us names no variant range", s.cat, s.name, s.ts));
      continue;
    }
    const auto it = sc.variant_ranges.find(variant);
    bool inside = false;
    if (it != sc.variant_ranges.end())
      for (const Slice& r : it->second) inside = inside || (s.ts >= r.ts - kSlackUs && s.end <= r.end + kSlackUs);
    if (!inside)
      problem(fmt::format("{} '{}' [{:.3f}, {:.3f}] us lies outside its variant range '{}'", s.cat, s.name, s.ts, s.end,
                          variant));
  }
}

// Counts against the report's kernel breakdowns (results that share a variant range name,
// e.g. one shape in two cases, are added up).
void check_counts(const Scan& sc, const Report& report, TraceCheck& out, const Problems& problem) {
  std::map<std::string, double> expected;
  for (const Result& r : report.results) {
    const json& k = r.profile.is_object() && r.profile.contains("kernels") ? r.profile["kernels"] : json();
    if (!k.is_object() || !k.contains("kernels") || !k["kernels"].is_array()) continue;
    double calls = 0;
    for (const json& ks : k["kernels"]) calls += ks.value("calls", 0.0);
    expected[nvtx_variant_name(r.problem, r.variant, r.params)] += calls * k.value("runs", 1);
    ++out.results_compared;
  }
  for (const auto& [name, n] : expected) {
    const auto it = sc.kernels_by_variant.find(name);
    const std::size_t got = it == sc.kernels_by_variant.end() ? 0 : it->second;
    if (std::llround(n) != static_cast<long long>(got))
      problem(fmt::format("'{}': {} kernels on the timeline, the report's breakdown counts {}", name, got, n));
  }
  for (const auto& [name, n] : sc.kernels_by_variant)
    if (!expected.count(name))
      problem(fmt::format("'{}': {} kernels on the timeline, but no result of the report has a kernel breakdown "
                          "for it",
                          name.empty() ? "(no variant)" : name, n));
}

}  // namespace

TraceCheck check_trace(const json& trace, const Report& report) {
  TraceCheck out;
  const Problems problem{out};
  if (!trace.is_object() || !trace.contains("traceEvents") || !trace["traceEvents"].is_array()) {
    problem("not a Chrome trace: no traceEvents array");
    return out;
  }
  const Scan sc = scan_events(trace, out, problem);
  out.ranges = sc.ranges.size();
  check_nesting(sc.ranges, problem);
  check_alignment(sc, problem);
  out.flows = sc.flow_ends.size();
  for (double id : sc.flow_ends)
    if (!sc.flow_starts.count(id)) problem(fmt::format("flow {} ends but never starts", id));
  check_counts(sc, report, out, problem);
  return out;
}

}  // namespace harness
