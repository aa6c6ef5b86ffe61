#include "render/report_speedup.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "core/suggest.hpp"
#include "core/units.hpp"
#include "harness/error.hpp"
#include "render/report_html.hpp"

namespace harness {

namespace {

using svg::escape;

bool timed(const Result& r) { return r.status == Status::passed && r.timing && r.timing->stats.median > 0; }
double median(const Result& r) { return r.timing->stats.median; }

std::vector<std::string> problems(const Report& rep) {
  std::vector<std::string> out;
  for (const auto& r : rep.results)
    if (std::find(out.begin(), out.end(), r.problem) == out.end()) out.push_back(r.problem);
  return out;
}

std::vector<const Result*> rows_of(const Report& rep, const std::string& problem) {
  std::vector<const Result*> out;
  for (const auto& r : rep.results)
    if (r.problem == problem) out.push_back(&r);
  return out;
}

// The reference's median time per shape (problem parameters) of one problem.
std::map<std::string, double> reference_times(const std::vector<const Result*>& rows, const std::string& ref) {
  std::map<std::string, double> out;
  for (const Result* r : rows)
    if (r->variant == ref && timed(*r)) out.emplace(html::params_text(*r), median(*r));
  return out;
}

// The shape of a result as the parameters that vary within its problem ("M=256 N=256
// K=256", without alpha=1 beta=0 when every result has them).
std::string shape_label(const Result& r, const std::vector<const Result*>& rows) {
  std::string s;
  for (const auto& [n, v] : r.params.entries()) {
    bool varies = false;
    for (const Result* o : rows)
      varies = varies || !o->params.has(n) || o->params.at(n) != v;
    if (!varies) continue;
    if (!s.empty()) s += ' ';
    s += n + "=" + html::value_text(v);
  }
  return s.empty() ? html::params_text(r) : s;
}

std::vector<std::string> variants_of(const std::vector<const Result*>& rows) {
  std::vector<std::string> out;
  for (const Result* r : rows)
    if (std::find(out.begin(), out.end(), r->variant) == out.end()) out.push_back(r->variant);
  return out;
}

struct Bar {
  std::string variant;
  double share = 0;
  std::string tip;
  std::optional<RatioInterval> interval;  // drawn as a whisker
};

struct Group {
  std::string shape;   // all parameters (the key)
  std::string label;   // the ones that vary within the problem
  std::vector<Bar> bars;
};

// A bar's value at its end (x1), after its 95% interval drawn as a whisker from
// whisker.first to whisker.second where it has one.
std::string bar_value_svg(const Bar& b, double x1, std::pair<double, double> whisker, double y, double bar_h) {
  std::string o;
  double label_x = x1 + 3;
  if (b.interval) {
    const auto [wl, wh] = whisker;
    o += fmt::format("<path d=\"M{0:.1f} {1:.1f}H{2:.1f}M{0:.1f} {3:.1f}V{4:.1f}M{2:.1f} {3:.1f}V{4:.1f}\" "
                     "stroke=\"#222\" fill=\"none\"/>\n",
                     wl, y + bar_h / 2, wh, y + 1, y + bar_h - 1);
    label_x = std::max(x1, wh) + 3;
  }
  return o + fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"9\" fill=\"#333\">{}</text>\n", label_x,
                         y + bar_h - 1, reference_ratio_text({b.share, b.interval}));
}

// A grouped horizontal bar chart: one group (row block) per shape, one bar per variant,
// the reference at 1 as a dashed line. Log axis when the shares span more than 8x.
// The speed axis of a bar chart over shares in [lo, hi]: logarithmic beyond a factor of 8
// (ticks 1, 3, 10, 30, ...), else linear from 0 with a step that gives a few ticks.
struct BarAxis {
  bool log = false;
  double lo = 0, hi = 0;
  std::vector<double> ticks;
};

BarAxis bar_axis(double lo, double hi) {
  BarAxis a;
  a.log = hi / lo > 8;
  a.hi = hi * 1.08;
  if (a.log) {
    a.lo = std::pow(10, std::floor(std::log10(lo)));
    a.hi = hi * 1.3;  // room for the value labels, not a whole decade
    for (double d = a.lo; d <= a.hi; d *= 10) {
      a.ticks.push_back(d);
      if (d * 3 <= a.hi) a.ticks.push_back(d * 3);
    }
  } else {
    const double step = a.hi > 4 ? 1 : a.hi > 2 ? 0.5 : a.hi > 1 ? 0.25 : 0.2;
    for (double t = 0; t <= a.hi + 1e-9; t += step) a.ticks.push_back(t);
    a.hi = std::max(a.hi, a.ticks.back());
  }
  return a;
}

std::string bar_chart(const std::string& id, const std::string& title, const std::vector<Group>& groups,
                      const std::string& reference, svg::ColorMap& colors) {
  double lo = 1, hi = 1;
  std::vector<std::string> legend;
  for (const auto& g : groups)
    for (const auto& b : g.bars) {
      lo = std::min(lo, b.interval ? std::min(b.share, b.interval->lo) : b.share);
      hi = std::max(hi, b.interval ? std::max(b.share, b.interval->hi) : b.share);
      if (std::find(legend.begin(), legend.end(), b.variant) == legend.end()) legend.push_back(b.variant);
    }
  const BarAxis axis = bar_axis(lo, hi);
  const bool log = axis.log;
  const double axis_lo = axis.lo, axis_hi = axis.hi;
  const std::vector<double>& ticks = axis.ticks;
  // The legend as wide as its longest name (merged reports: "pytorch_bf16_compile
  // compile_mode=reduce-overhead"), about 7 px a character at 12 px after a 50 px indent.
  std::size_t longest = 0;
  for (const auto& v : legend) longest = std::max(longest, v.size());
  const double legend_w = std::max(170.0, 7.0 * static_cast<double>(longest) + 50);
  // The shape labels as wide as the longest (up to kMaxLabel characters, ~7 px each at
  // 11 px): a fixed 250 px cut "M=4096 N=4096 K=4096 dtype=bf16 layout=nt" at its left.
  constexpr std::size_t kMaxLabel = 56;
  std::size_t longest_label = 0;
  for (const auto& g : groups) longest_label = std::max(longest_label, std::min(g.label.size(), kMaxLabel));
  const double label_w = std::max(120.0, 7.0 * static_cast<double>(longest_label) + 16);
  const double plot_w = 520, top = 52, bar_h = 10, gap = 2, group_gap = 12;
  double plot_h = 0;
  for (const auto& g : groups) plot_h += static_cast<double>(g.bars.size()) * (bar_h + gap) + group_gap;
  const double height = std::max(top + plot_h + 50, top + static_cast<double>(legend.size()) * 18.0 + 40);
  auto px = [&](double v) {
    const double f = log ? (std::log10(v) - std::log10(axis_lo)) / (std::log10(axis_hi) - std::log10(axis_lo))
                         : (v - axis_lo) / (axis_hi - axis_lo);
    return label_w + std::clamp(f, 0.0, 1.0) * plot_w;
  };
  // The value labels ("0.982x (0.982-0.983)", 9 px: ~5 px a character) may run past the
  // plot's right edge: the legend starts after the furthest one, not on top of it.
  double value_room = 0;
  for (const auto& g : groups)
    for (const auto& b : g.bars) {
      const double end = std::max(px(b.share), b.interval ? px(b.interval->hi) : 0.0) + 3 +
                         5.0 * static_cast<double>(reference_ratio_text({b.share, b.interval}).size());
      value_room = std::max(value_room, end - (label_w + plot_w));
    }
  const double width = label_w + plot_w + value_room + legend_w + 20;
  std::string o = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" id=\"{}\" class=\"bars\" viewBox=\"0 0 {:.0f} {:.0f}\" width=\"{:.0f}\" "
      "height=\"{:.0f}\" role=\"img\" aria-label=\"{}\" font-family=\"Helvetica, Arial, sans-serif\">\n"
      "<rect width=\"100%\" height=\"100%\" fill=\"#fff\"/>\n",
      escape(id), width, height, width, height, escape(title));
  o += fmt::format("<text x=\"8\" y=\"22\" font-size=\"15\" font-weight=\"bold\">{}</text>\n", escape(title));
  o += fmt::format(
      "<text x=\"8\" y=\"40\" font-size=\"12\" fill=\"#555\">speed as a share of {} at the same shape ({} median time / "
      "variant median time); right of the dashed line is faster than {}{}</text>\n",
      escape(reference), escape(reference), escape(reference), log ? "; log scale" : "");
  for (double t : ticks) {
    o += fmt::format("<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{0:.1f}\" y2=\"{2:.1f}\" stroke=\"#e3e3e3\"/>\n", px(t), top,
                     top + plot_h);
    o += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"11\" text-anchor=\"middle\">{}x</text>\n", px(t),
                     top + plot_h + 14, format_3sig(t));
  }
  o += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"12\" text-anchor=\"middle\">speed relative to {} (x)</text>\n",
                   label_w + plot_w / 2, top + plot_h + 34, escape(reference));
  double y = top;
  for (const auto& g : groups) {
    const double gh = static_cast<double>(g.bars.size()) * (bar_h + gap);
    o += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"11\" text-anchor=\"end\">{}</text>\n", label_w - 8,
                     y + gh / 2 + 4, escape(g.label.size() > kMaxLabel ? g.label.substr(0, kMaxLabel - 3) + "..." : g.label));
    for (const auto& b : g.bars) {
      const double x0 = px(log ? axis_lo : 0), x1 = px(b.share);
      o += fmt::format("<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.0f}\" fill=\"{}\"><title>{}</title></rect>\n",
                       x0, y, std::max(1.0, x1 - x0), bar_h, colors(b.variant), escape(b.tip));
      o += bar_value_svg(b, x1, b.interval ? std::pair{px(b.interval->lo), px(b.interval->hi)} : std::pair{x1, x1}, y,
                         bar_h);
      y += bar_h + gap;
    }
    y += group_gap;
  }
  o += fmt::format("<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{0:.1f}\" y2=\"{2:.1f}\" stroke=\"#222\" stroke-dasharray=\"6 3\"/>\n",
                   px(1), top - 4, top + plot_h);
  o += fmt::format("<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" fill=\"none\" stroke=\"#888\"/>\n",
                   label_w, top, plot_w, plot_h);
  double ly = top + 8;
  for (const auto& v : legend) {
    o += fmt::format("<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"14\" height=\"10\" fill=\"{}\"/>"
                     "<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"12\">{}</text>\n",
                     label_w + plot_w + value_room + 30, ly - 9, colors(v), label_w + plot_w + value_room + 50, ly, escape(v));
    ly += 18;
  }
  return o + "</svg>\n";
}

}  // namespace

std::string reference_for(const std::vector<const Result*>& rows, const std::string& reference) {
  if (reference == "none") return "";
  if (reference.empty()) return html::vendor_variant(rows);
  for (const Result* r : rows)
    if (r->variant == reference) return reference;
  return "";
}

std::optional<double> reference_share(const Result& r, const std::vector<const Result*>& rows, const std::string& ref) {
  const auto ratio = reference_ratio(r, rows, ref);
  return ratio ? std::optional<double>(ratio->share) : std::nullopt;
}

std::optional<ReferenceRatio> reference_ratio(const Result& r, const std::vector<const Result*>& rows,
                                              const std::string& ref) {
  if (ref.empty() || !timed(r)) return std::nullopt;
  const std::string shape = html::params_text(r);
  for (const Result* o : rows) {
    if (o->variant != ref || !timed(*o) || html::params_text(*o) != shape) continue;
    ReferenceRatio out{median(*o) / median(r), std::nullopt};
    // The reference against itself is 1 by definition: no interval to give.
    if (o != &r) out.interval = median_ratio_interval(o->timing->samples, r.timing->samples);
    return out;
  }
  return std::nullopt;
}

std::string reference_ratio_text(const ReferenceRatio& ratio) {
  std::string o = format_3sig(ratio.share) + "x";
  if (ratio.interval) o += fmt::format(" ({}-{})", format_3sig(ratio.interval->lo), format_3sig(ratio.interval->hi));
  return o;
}

void check_reference(const Report& report, const std::string& reference) {
  if (reference.empty() || reference == "none") return;
  std::vector<std::string> variants;
  for (const auto& r : report.results) {
    if (r.variant == reference) return;
    if (std::find(variants.begin(), variants.end(), r.variant) == variants.end()) variants.push_back(r.variant);
  }
  throw InputError(fmt::format("--reference '{}': no result of the report has this variant{}", reference,
                               did_you_mean(reference, variants)));
}

std::vector<VariantGeomean> speedup_geomeans(const Report& report, const std::string& reference) {
  std::vector<VariantGeomean> out;
  for (const auto& problem : problems(report)) {
    const auto rows = rows_of(report, problem);
    const std::string ref = reference_for(rows, reference);
    if (ref.empty()) continue;
    const auto ref_t = reference_times(rows, ref);
    for (const auto& v : variants_of(rows)) {
      VariantGeomean g{problem, ref, v};
      double log_sum = 0;
      for (const Result* r : rows) {
        if (r->variant != v || !timed(*r)) continue;
        const auto it = ref_t.find(html::params_text(*r));
        if (it == ref_t.end()) continue;
        const double share = it->second / median(*r);
        log_sum += std::log(share);
        g.min = g.shapes == 0 ? share : std::min(g.min, share);
        g.max = g.shapes == 0 ? share : std::max(g.max, share);
        ++g.shapes;
      }
      if (g.shapes == 0) continue;
      g.geomean = std::exp(log_sum / static_cast<double>(g.shapes));
      out.push_back(g);
    }
  }
  return out;
}

std::string speedup_section_html(const Report& report, const std::string& reference, svg::ColorMap& colors) {
  std::string o;
  const auto geo = speedup_geomeans(report, reference);
  if (geo.empty())
    return fmt::format("<p class=\"nochart\">No problem has {} with timed results: no speedup chart (pick one with "
                       "--reference VARIANT).</p>\n",
                       reference.empty() ? std::string("a vendor variant (cublas, cub, cudnn, cusparse)")
                                         : "the reference '" + reference + "'");
  o += "<h3>Geometric mean over the suite</h3>\n<table class=\"speedup\">\n<thead><tr><th>problem</th><th>reference</th>"
       "<th>variant</th><th>geometric mean share</th><th>min</th><th>max</th><th>shapes</th></tr></thead>\n<tbody>\n";
  for (const auto& g : geo)
    o += fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td><td class=\"num {}\">{}x</td><td class=\"num\">{}x</td>"
                     "<td class=\"num\">{}x</td><td class=\"num\">{}</td></tr>\n",
                     escape(g.problem), escape(g.reference), escape(g.variant),
                     g.variant == g.reference ? "" : g.geomean >= 1 ? "good" : "", format_3sig(g.geomean),
                     format_3sig(g.min), format_3sig(g.max), g.shapes);
  o += "</tbody>\n</table>\n";
  o += "<p class=\"note\">Each bar: the reference's median time / the variant's median time at the same shape, "
       "with its 95% confidence interval (the whisker, and in brackets) where both results have at least 5 samples: "
       "a percentile bootstrap, 2000 resamples of each result's samples with a fixed seed, so the same report "
       "always gives the same interval.</p>\n";
  std::size_t index = 0;
  for (const auto& problem : problems(report)) {
    const auto rows = rows_of(report, problem);
    const std::string ref = reference_for(rows, reference);
    if (ref.empty()) continue;
    const auto ref_t = reference_times(rows, ref);
    std::vector<std::string> cases;
    for (const Result* r : rows)
      if (std::find(cases.begin(), cases.end(), r->case_name) == cases.end()) cases.push_back(r->case_name);
    for (const auto& cname : cases) {
      std::vector<Group> groups;
      for (const Result* r : rows) {
        if (r->case_name != cname || !timed(*r) || r->variant == ref) continue;
        const std::string shape = html::params_text(*r);
        const auto it = ref_t.find(shape);
        if (it == ref_t.end()) continue;
        auto g = std::find_if(groups.begin(), groups.end(), [&](const Group& x) { return x.shape == shape; });
        if (g == groups.end()) g = groups.insert(groups.end(), Group{shape, "", {}});
        const auto ratio = reference_ratio(*r, rows, ref);
        const double share = it->second / median(*r);
        if (g->bars.empty()) {
          // The parameters that vary within the case, else within the problem.
          std::vector<const Result*> in_case;
          for (const Result* x : rows)
            if (x->case_name == cname) in_case.push_back(x);
          g->label = shape_label(*r, in_case);
          if (g->label == html::params_text(*r)) g->label = shape_label(*r, rows);
        }
        const ReferenceRatio shown{share, ratio ? ratio->interval : std::nullopt};
        g->bars.push_back({r->variant, share,
                           fmt::format("{} {}: {} of {} ({} vs {}{})", r->variant, shape, reference_ratio_text(shown),
                                       ref, format_seconds(median(*r)), format_seconds(it->second),
                                       shown.interval ? "; 95% bootstrap interval" : ""),
                           shown.interval});
      }
      if (groups.empty()) continue;
      o += bar_chart(fmt::format("speedup-{}", index++),
                     fmt::format("{}{}: speed relative to {}", problem, cname.empty() ? "" : " / " + cname, ref), groups,
                     ref, colors);
    }
  }
  return o;
}

}  // namespace harness
