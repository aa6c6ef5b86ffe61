#include "render/report_charts.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "render/report_fields.hpp"
#include "render/report_html.hpp"
#include "core/units.hpp"

namespace harness {

using namespace fields;
using svg::escape;

namespace {

// Which numeric parameter to put on the x axis of a problem's charts, and how the rows
// fall into series.
struct Layout {
  bool ok = false;
  std::string x;                   // parameter name
  std::string x_label;             // "M = N = K"
  std::vector<std::string> series_params;  // parameters that split series (besides the variant)
  // Parameters that change along x without being x (batch 100 at seq_len 13, 2 at 4096):
  // the points are unrelated shapes, which a line must not join.
  std::vector<std::string> along_x;
};

bool numeric_param(const std::vector<const Result*>& rows, const std::string& name) {
  bool any = false;
  for (const Result* r : rows) {
    if (!r->params.has(name)) continue;
    if (!pv(*r, name).is_number()) return false;
    any = true;
  }
  return any;
}

std::size_t distinct(const std::vector<const Result*>& rows, const std::string& name) {
  std::set<std::string> v;
  for (const Result* r : rows)
    if (r->params.has(name)) {
      const json x = pv(*r, name);  // numbers by value: 1 and 1.0 are one value
      v.insert(x.is_number() ? fmt::format("{}", x.get<double>()) : x.dump());
    }
  return v.size();
}

Layout choose_layout(const std::vector<const Result*>& rows, const std::vector<std::string>& prefer, bool prefer_first) {
  Layout l;
  const auto names = param_names(rows);
  std::vector<std::string> numeric;
  for (const auto& n : names)
    if (numeric_param(rows, n)) numeric.push_back(n);
  if (numeric.empty()) return l;
  auto rank = [&](const std::string& n) {
    auto it = std::find(prefer.begin(), prefer.end(), n);
    return it == prefer.end() ? prefer.size() : static_cast<std::size_t>(it - prefer.begin());
  };
  std::string best;
  if (prefer_first)
    for (const auto& p : prefer)
      if (std::find(numeric.begin(), numeric.end(), p) != numeric.end() && distinct(rows, p) > 1) {
        best = p;
        break;
      }
  // No parameter varies (one shape, ours next to PyTorch's): a size parameter, never the
  // first constant of the list (clip_norm).
  if (best.empty())
    for (const auto& p : prefer)
      if (std::find(numeric.begin(), numeric.end(), p) != numeric.end() &&
          std::none_of(numeric.begin(), numeric.end(), [&](const std::string& n) { return distinct(rows, n) > 1; })) {
        best = p;
        break;
      }
  if (best.empty()) {
    best = numeric.front();
    for (const auto& n : numeric) {
      const std::size_t dn = distinct(rows, n), db = distinct(rows, best);
      if (dn > db || (dn == db && rank(n) < rank(best))) best = n;
    }
  }
  l.ok = true;
  l.x = best;
  std::vector<std::string> same = {best};
  for (const auto& n : names) {
    if (n == best) continue;
    bool equal = numeric_param(rows, n), determined = true, varies = distinct(rows, n) > 1;
    std::map<std::string, std::string> by_x;
    for (const Result* r : rows) {
      const std::string xv = r->params.has(best) ? pv(*r, best).dump() : "";
      const std::string v = r->params.has(n) ? pv(*r, n).dump() : "";
      if (xv != v) equal = false;
      auto [it, inserted] = by_x.emplace(xv, v);
      if (!inserted && it->second != v) determined = false;
    }
    if (equal && varies) same.push_back(n);
    else if (varies && !determined) l.series_params.push_back(n);
    else if (varies) l.along_x.push_back(n);
  }
  // Keep the declared order in "M = N = K".
  std::vector<std::string> ordered;
  for (const auto& n : names)
    if (std::find(same.begin(), same.end(), n) != same.end()) ordered.push_back(n);
  l.x_label = fmt::format("{}", fmt::join(ordered, " = "));
  return l;
}

std::string series_key(const Result& r, const Layout& l) {
  std::string key = r.variant;
  for (const auto& n : l.series_params)
    if (r.params.has(n)) key += fmt::format(" {}={}", n, param_text(pv(r, n)));
  return key;
}

std::string describe(const Result& r) {
  std::string s = r.problem + "/" + r.variant;
  for (const auto& k : param_order_of(r)) s += fmt::format(" {}={}", k, param_text(pv(r, k)));
  return s;
}

// Index of the series with this label, added when new.
std::size_t series_index(std::vector<svg::Series>& series, const std::string& label) {
  for (std::size_t i = 0; i < series.size(); ++i)
    if (series[i].label == label) return i;
  series.push_back({label, {}, true, {}});
  return series.size() - 1;
}

void x_axis(svg::Axis& axis, const std::vector<double>& xs, const std::string& label) {
  axis.label = label;
  double lo = 0, hi = 0;
  if (!xs.empty()) {
    lo = *std::min_element(xs.begin(), xs.end());
    hi = *std::max_element(xs.begin(), xs.end());
  }
  axis.log = lo > 0 && hi / lo >= 4;
  std::size_t pow2 = 0;
  bool integers = true;
  for (double x : xs) {
    if (x != std::floor(x)) integers = false;
    if (x >= 1 && std::exp2(std::round(std::log2(x))) == x) ++pow2;
  }
  axis.ticks = integers && pow2 * 2 >= xs.size() && !xs.empty() ? svg::TickStyle::binary : svg::TickStyle::decimal;
}

void y_axis(svg::Axis& axis, const std::vector<double>& ys, const std::string& label, double log_above) {
  axis.label = label;
  double lo = 0, hi = 0;
  if (!ys.empty()) {
    lo = *std::min_element(ys.begin(), ys.end());
    hi = *std::max_element(ys.begin(), ys.end());
  }
  axis.log = lo > 0 && hi / lo >= log_above;
  axis.from_zero = !axis.log;
}

// The unit of a size parameter, for axis labels ("" when unknown).
std::string param_unit(const std::string& name) {
  static const std::map<std::string, std::string> kUnits = {
      {"n", "elements"}, {"N", "elements"}, {"M", "elements"}, {"K", "elements"}, {"size", "elements"},
      {"seq_len", "tokens"}, {"batch", "sequences"}, {"heads", "heads"}, {"head_dim", "elements"},
      {"kv_heads", "heads"}, {"d_model", "elements"}, {"layers", "layers"}};
  const auto it = kUnits.find(name);
  return it == kUnits.end() ? "" : it->second;
}

std::string with_unit(const std::string& label, const std::string& param) {
  const std::string u = param_unit(param);
  return u.empty() ? label : fmt::format("{} ({})", label, u);
}



// The numeric parameter that drives a problem's extra memory: the one that, together
// with the variant, determines the workspace best (fewest (variant, value) groups with
// two different workspaces), then the one with more distinct values, then `prefer`'s order.
std::string memory_driver(const std::vector<const Result*>& used, const std::vector<std::string>& prefer) {
  std::string best;
  std::size_t best_ambiguous = 0, best_distinct = 0;
  for (const auto& n : param_names(used)) {
    if (!numeric_param(used, n) || distinct(used, n) < 2) continue;
    std::map<std::string, std::set<double>> groups;
    for (const Result* r : used)
      if (r->params.has(n)) groups[r->variant + "\x1f" + pv(*r, n).dump()].insert(ws_bytes(*r));
    std::size_t ambiguous = 0;
    for (const auto& [k, v] : groups) ambiguous += v.size() > 1;
    const std::size_t d = distinct(used, n);
    auto rank = [&](const std::string& x) { return std::find(prefer.begin(), prefer.end(), x) - prefer.begin(); };
    if (best.empty() || ambiguous < best_ambiguous || (ambiguous == best_ambiguous && d > best_distinct) ||
        (ambiguous == best_ambiguous && d == best_distinct && rank(n) < rank(best))) {
      best = n;
      best_ambiguous = ambiguous;
      best_distinct = d;
    }
  }
  return best;
}

// How many variants the results are of.
std::size_t variant_count(const std::vector<const Result*>& results) {
  std::set<std::string> names;
  for (const Result* r : results) names.insert(r->variant);
  return names.size();
}

}  // namespace


std::string throughput_chart(const std::string& problem, const std::vector<const Result*>& prow, std::size_t index,
                             svg::ColorMap& colors) {
  std::vector<const Result*> timed;
  for (const Result* r : prow)
    if (is_timed(*r)) timed.push_back(r);
  if (timed.empty()) {
    std::map<std::string, int> n;
    for (const Result* r : prow) ++n[status_text(*r)];
    return fmt::format("<p class=\"nochart\">No timed result for <b>{}</b> ({} skipped, {} failed, {} errors): "
                       "nothing to plot.</p>\n",
                       escape(problem), n["skipped"], n["failed"], n["error"]);
  }
  const Layout l = choose_layout(prow, {"n", "N", "seq_len", "size", "M", "K", "batch"}, false);
  if (!l.ok)
    return fmt::format("<p class=\"nochart\"><b>{}</b> has no numeric parameter to plot against.</p>\n",
                       escape(problem));
  // Metric: GFLOP/s when every timed result does FLOPs, GB/s when every one moves bytes,
  // else the median time.
  bool all_flops = true, all_bytes = true;
  double tmax = 0;
  for (const Result* r : timed) {
    all_flops = all_flops && flops_of(*r) > 0;
    all_bytes = all_bytes && bytes_of(*r) > 0;
    tmax = std::max(tmax, median_s(*r));
  }
  std::string unit = "s";
  double scale = 1;
  if (tmax < 1e-3) unit = "us", scale = 1e6;
  else if (tmax < 1) unit = "ms", scale = 1e3;
  svg::Chart c;
  c.id = fmt::format("throughput-{}", index);
  std::string metric;
  // FLOP rates in TFLOP/s once one reaches 1000 GFLOP/s (tensor cores: "700" reads, "700k" does not).
  double flop_unit = 1;  // GFLOP/s per plotted unit
  if (all_flops) {
    double top = 0;
    for (const Result* r : timed) top = std::max(top, gflops_of(*r));
    flop_unit = top >= 1000 ? 1000 : 1;
    metric = flop_unit > 1 ? "TFLOP/s" : "GFLOP/s";
  } else if (all_bytes) {
    metric = "GB/s";
  } else {
    metric = "median time";
  }
  // One series per variant and value of the other varying parameters reads well for a
  // sweep of one size; a suite of unrelated shapes (square, odd, tall-skinny, K=1 ...)
  // would make dozens of two-point lines. Then the x axis is the work of one run and
  // every variant is one series.
  std::set<std::string> keys;
  for (const Result* r : timed) keys.insert(series_key(*r, l));
  constexpr std::size_t kMaxSeries = 12;
  const bool by_work = keys.size() > kMaxSeries && (all_flops || all_bytes);
  const std::string x_label = by_work ? (all_flops ? "work per run (GFLOP)" : "bytes per run (GB)") : with_unit(l.x_label, l.x);
  c.title = fmt::format("{}: {} against {}", problem, metric, by_work ? std::string(all_flops ? "work per run" : "bytes per run") : l.x_label);
  c.subtitle = all_flops || all_bytes ? fmt::format("{} at the median time of each result; higher is better", metric)
                                      : "median time of each result; lower is better";
  if (by_work) c.subtitle += "; one point per shape, one series per variant";
  const bool unjoined = !by_work && !l.along_x.empty();
  if (unjoined) c.subtitle += fmt::format("; points not joined: they differ in {} too", fmt::join(l.along_x, ", "));
  std::vector<double> xs, ys;
  for (const Result* r : timed) {
    if (!by_work && !r->params.has(l.x)) continue;
    const double x = by_work ? (all_flops ? flops_of(*r) : bytes_of(*r)) * 1e-9 : pv(*r, l.x).get<double>();
    const double y = all_flops ? gflops_of(*r) / flop_unit : all_bytes ? gbps_of(*r) : median_s(*r) * scale;
    const std::size_t si = series_index(c.series, by_work ? r->variant : series_key(*r, l));
    c.series[si].color = colors(r->variant);
    const std::string value = all_flops ? format_rate(gflops_of(*r))
                              : all_bytes ? fmt::format("{} GB/s", format_figure(y))
                                          : format_seconds(median_s(*r));
    c.series[si].points.push_back({x, y, fmt::format("{}: {} (median {}, {} samples)", describe(*r), value,
                                                     format_seconds(median_s(*r)), sample_count(*r))});
    if (by_work || unjoined) c.series[si].line = false;
    xs.push_back(x);
    ys.push_back(y);
  }
  // The variant's colour identifies it across the page, but where one variant has several
  // series here (mma at bf16 and at f16) they would share it (issue 34): then every series
  // takes its own palette colour.
  if (c.series.size() > variant_count(timed)) for (auto& series : c.series) series.color.clear();
  x_axis(c.x, xs, x_label);
  y_axis(c.y, ys, all_flops || all_bytes ? metric : fmt::format("median time ({})", unit),
         all_flops || all_bytes ? 50 : 20);
  return svg::render(c);
}

// The roof lines of a roofline chart: one per compute roof the points use (each the DRAM
// slope up to its ridge, then flat), and invisible range markers so that the axes cover
// every ridge.
void add_roofs(svg::Chart& c, const std::vector<std::pair<std::string, double>>& pipes, double peak_bw,
               bool have_peaks, double xlo, double xhi) {
  for (const auto& [pipe, flops_peak] : pipes) {
    auto roof_at = [&, fp = flops_peak](double x) {
      if (peak_bw > 0 && fp > 0) return std::min(fp, peak_bw * x);
      return fp > 0 ? fp : peak_bw * x;
    };
    if (!(peak_bw > 0 || flops_peak > 0)) continue;
    // The axes cover the points and the ridge (and the flat roof); the roof itself
    // runs from far left to far right and is clipped to the plot.
    svg::RefLine range{"", {}, "none", true};
    if (peak_bw > 0 && flops_peak > 0) range.points.emplace_back(flops_peak / peak_bw, flops_peak);
    else range.points.emplace_back(xlo, roof_at(xlo));
    c.refs.push_back(range);
    svg::RefLine roof;
    roof.label = !have_peaks ? "roof (best measured)" : pipes.size() == 1 ? "roof (device peaks)" : "roof " + pipe;
    roof.sets_range = false;
    const double far_lo = std::min(xlo, range.points[0].first) / 1e6, far_hi = std::max(xhi, range.points[0].first) * 1e6;
    roof.points.emplace_back(far_lo, roof_at(far_lo));
    if (peak_bw > 0 && flops_peak > 0) roof.points.emplace_back(flops_peak / peak_bw, flops_peak);
    roof.points.emplace_back(far_hi, roof_at(far_hi));
    c.refs.push_back(roof);
  }
}

std::string roofline_chart(const Report& report, const std::vector<Result>& rows, std::string& note,
                           svg::ColorMap& colors) {
  double peak_bw = 0, peak_flops = 0;
  bool have_peaks = false;
  if (const auto& p = report.environment.peaks) {
    peak_bw = p->dram_gbytes_per_s;
    peak_flops = p->fp32_gflops;
    have_peaks = peak_bw > 0 || peak_flops > 0;
  }
  std::string source = "device peak";
  if (!have_peaks) {
    source = "best measured";
    for (const auto& r : rows) {
      if (!is_timed(r)) continue;
      if (bytes_of(r) > 0) peak_bw = std::max(peak_bw, gbps_of(r));
      if (flops_of(r) > 0) peak_flops = std::max(peak_flops, gflops_of(r));
    }
  }
  svg::Chart c;
  c.id = "roofline";
  c.title = "Roofline";
  std::vector<std::string> parts;
  if (peak_bw > 0) parts.push_back(fmt::format("{} GB/s", format_figure(peak_bw)));
  if (peak_flops > 0) parts.push_back(format_rate(peak_flops));
  c.subtitle = have_peaks ? fmt::format("roof: the device peaks measured at run start, {} (FP32)", fmt::join(parts, ", "))
                          : fmt::format("roof: the best results of this report, {} (the report states no device peaks)",
                                        fmt::join(parts, ", "));
  c.x.label = "arithmetic intensity (FLOP/byte)";
  c.y.label = "GFLOP/s";
  c.x.log = c.y.log = true;
  std::size_t not_shown = 0;
  double xlo = std::numeric_limits<double>::infinity(), xhi = 0;
  std::vector<std::pair<std::string, double>> pipes;  // the compute roofs the points use
  for (const auto& r : rows) {
    if (!is_timed(r)) continue;
    if (!(flops_of(r) > 0 && bytes_of(r) > 0 && intensity_of(r) > 0 && gflops_of(r) > 0)) {
      ++not_shown;
      continue;
    }
    const std::size_t si = series_index(c.series, r.problem + "/" + r.variant);
    c.series[si].line = false;
    c.series[si].color = colors(r.variant);
    // Each result against the compute roof of its own dtype (bf16 against the bf16 tensor
    // peak), where the report states one.
    double flops_roof = peak_flops;
    if (have_peaks && report.environment.peaks) {
      const auto [gflops, pipe] = report.environment.peaks->compute(dtype_param(r.params));
      if (gflops > 0) {
        flops_roof = gflops;
        if (std::find(pipes.begin(), pipes.end(), std::make_pair(pipe, gflops)) == pipes.end())
          pipes.emplace_back(pipe, gflops);
      }
    }
    const double roof = peak_bw > 0 && flops_roof > 0 ? std::min(flops_roof, peak_bw * intensity_of(r))
                        : flops_roof > 0               ? flops_roof
                                                       : peak_bw * intensity_of(r);
    c.series[si].points.push_back({intensity_of(r), gflops_of(r),
                                   fmt::format("{}: {} at {} FLOP/byte ({:.0f}% of the roof)", describe(r),
                                               format_rate(gflops_of(r)), format_figure(intensity_of(r)),
                                               roof > 0 ? 100 * gflops_of(r) / roof : 0.0)});
    xlo = std::min(xlo, intensity_of(r));
    xhi = std::max(xhi, intensity_of(r));
  }
  if (!(xhi > 0)) {
    note = not_shown ? fmt::format("No timed result has both FLOPs and bytes ({} without): no roofline to draw.",
                                   not_shown)
                     : "No timed result: no roofline to draw.";
    return "";
  }
  if (pipes.empty()) pipes.emplace_back(have_peaks ? "FP32" : "", peak_flops);
  std::sort(pipes.begin(), pipes.end(), [](const auto& a, const auto& b) { return a.second < b.second; });
  if (have_peaks) {
    std::vector<std::string> roofs;
    for (const auto& [pipe, gflops] : pipes) roofs.push_back(fmt::format("{} {}", format_rate(gflops), pipe));
    c.subtitle = fmt::format("roofs: the device peaks measured at run start, {} GB/s DRAM, {}; each point against "
                             "the roof of its dtype", format_figure(peak_bw), fmt::join(roofs, ", "));
  }
  add_roofs(c, pipes, peak_bw, have_peaks, xlo, xhi);
  if (not_shown)
    note = fmt::format("{} timed result(s) without FLOPs (or bytes) have no arithmetic intensity and are not shown.",
                       not_shown);
  return svg::render(c);
}

// The note of a problem whose results used different amounts of extra memory but have no
// numeric parameter that varies among them (one shape, say, variants with different
// workspaces): nothing to draw them against, so say what was recorded.
std::string no_size_note(const std::string& problem, const std::vector<const Result*>& used,
                         const std::set<double>& values) {
  const std::size_t ooms = static_cast<std::size_t>(
      std::count_if(used.begin(), used.end(), [](const Result* r) { return oom(*r); }));
  std::string recorded;
  if (!values.empty())
    recorded = values.size() == 1 ? fmt::format("extra device memory {}", format_bytes(*values.begin()))
                                  : fmt::format("extra device memory from {} to {}", format_bytes(*values.begin()),
                                                format_bytes(*values.rbegin()));
  if (ooms > 0)
    recorded += fmt::format("{}{} result(s) out of memory", recorded.empty() ? "" : "; ", ooms);
  // (The page's fallback text would claim that no extra memory was used.)
  return fmt::format("<p class=\"note\">{}: {} across {} result(s), but no size parameter varies among them: "
                     "no chart (the Results table has each value).</p>\n",
                     escape(problem), recorded, used.size());
}

// One problem's extra device memory against its size parameter x: a line per variant,
// out-of-memory skips as markers at the top.
std::string memory_chart(const std::string& problem, const std::vector<const Result*>& used, const std::string& x,
                         std::size_t index, svg::ColorMap& colors) {
  double wmax = 0;
  for (const Result* r : used) wmax = std::max(wmax, ws_bytes(*r));
  std::string unit = "B";
  double div = 1;
  if (wmax >= 1024.0 * 1024 * 1024) unit = "GiB", div = 1024.0 * 1024 * 1024;
  else if (wmax >= 1024.0 * 1024) unit = "MiB", div = 1024.0 * 1024;
  else if (wmax >= 1024.0) unit = "KiB", div = 1024.0;
  svg::Chart c;
  c.id = fmt::format("memory-{}", index);
  c.title = fmt::format("{}: extra device memory against {}", problem, x);
  c.subtitle = "peak workspace each variant allocated beyond inputs and outputs; x at the top: skipped, out of memory";
  c.edge_marker_label = "out of memory (skipped)";
  std::vector<double> xs, ys;
  std::map<std::string, std::map<std::string, std::set<double>>> per_x;  // variant -> x -> values
  for (const Result* r : used) {
    if (!r->params.has(x)) continue;
    const double xv = pv(*r, x).get<double>();
    const std::size_t si = series_index(c.series, r->variant);
    c.series[si].color = colors(r->variant);
    if (oom(*r)) {
      c.edge_markers.push_back({xv, si, fmt::format("{}: {}", describe(*r), r->reason)});
      xs.push_back(xv);
      continue;
    }
    c.series[si].points.push_back(
        {xv, ws_bytes(*r) / div, fmt::format("{}: {} extra", describe(*r), format_bytes(ws_bytes(*r)))});
    per_x[r->variant][pv(*r, x).dump()].insert(ws_bytes(*r));
    xs.push_back(xv);
    ys.push_back(ws_bytes(*r) / div);
  }
  // A variant whose workspace other parameters also change gets points, not a line.
  for (auto& series : c.series)
    for (const auto& [xv, set] : per_x[series.label])
      if (set.size() > 1) series.line = false;
  x_axis(c.x, xs, with_unit(x, x));
  y_axis(c.y, ys, fmt::format("extra device memory ({})", unit), 16);
  if (c.y.log) {  // decades of sizes: bytes on the axis, labelled 256 KiB, 1 MiB, ...
    c.y.ticks = svg::TickStyle::bytes;
    c.y.label = "extra device memory (bytes)";
    for (auto& series : c.series)
      for (auto& p : series.points) p.y *= div;
  }
  return svg::render(c);
}

std::string memory_charts(const std::vector<Result>& rows, svg::ColorMap& colors) {
  std::string o, notes;
  std::size_t index = 0;
  for (const auto& problem : problems_of(rows)) {
    const auto prow = rows_of(rows, problem);
    std::vector<const Result*> used;
    std::set<double> values;
    bool any_oom = false;
    for (const Result* r : prow) {
      if (ws_bytes(*r) > 0 || oom(*r)) used.push_back(r);
      if (ws_bytes(*r) > 0) values.insert(ws_bytes(*r));
      any_oom = any_oom || oom(*r);
    }
    if (used.empty()) continue;
    if (values.size() <= 1 && !any_oom) {
      // One value everywhere (cuBLAS's fixed workspace): a flat line says nothing.
      std::set<std::string> vs;
      for (const Result* r : used) vs.insert(r->variant);
      notes += fmt::format("<p class=\"note\">{}: every result that used extra device memory used the same {} ({}); "
                           "no chart.</p>\n",
                           escape(problem), format_bytes(*values.begin()), escape(fmt::format("{}", fmt::join(vs, ", "))));
      continue;
    }
    const std::string x = memory_driver(used, {"seq_len", "N", "n", "S", "L", "M", "K", "batch"});
    if (x.empty()) {
      notes += no_size_note(problem, used, values);
      continue;
    }
    o += memory_chart(problem, used, x, index++, colors);
  }
  if (o.empty() && notes.empty())
    o = "<p class=\"nochart\">No result used extra device memory (workspace_peak_bytes is 0 everywhere) and none "
        "ran out of memory: no memory chart.</p>\n";
  return o + notes;
}

}  // namespace harness
