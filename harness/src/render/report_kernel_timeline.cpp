// The report page's "Kernel timelines": per result, the kernels of the first traced run of
// its profiling pass (profile.kernels.timeline) to scale. That run is a separate launch
// under CUPTI tracing after timing, so the idle time between its kernels is host work
// between launches made slower by the tracing (launch overhead, first-launch module
// loading), not the timed run's (issue 34: a 1.48 ms gap drawn before the second kernel
// of a 55 us result, with nothing to say so). A stretch longer than the result's timed
// median cannot have been in any timed sample: it is cut out and drawn as a break.
#include <algorithm>

#include <fmt/format.h>

#include "core/units.hpp"
#include "render/report_html.hpp"
#include "render/report_svg.hpp"
#include "render/report_timeline.hpp"

namespace harness {

namespace {

using nlohmann::json;
using svg::escape;

constexpr double kBreakPx = 14;  // the drawn width of a cut-out idle stretch

struct Kernel {
  double start = 0, duration = 0;
  std::size_t name = 0;
};

// An idle stretch cut out of the drawing, [from, to) in seconds from the first kernel.
struct Cut {
  double from = 0, to = 0;
};

// The time axis of one row: to scale, but for the cut stretches (kBreakPx each).
class RowAxis {
 public:
  RowAxis(std::vector<Cut> cuts, double span, double track_px) : cuts_(std::move(cuts)) {
    double drawn = span;
    for (const Cut& c : cuts_) drawn -= c.to - c.from;
    const double px = track_px - kBreakPx * static_cast<double>(cuts_.size());
    scale_ = drawn > 0 ? px / drawn : 0;
  }
  // Pixels from the track's left edge at time t.
  double x(double t) const {
    double skipped = 0, breaks = 0;
    for (const Cut& c : cuts_) {
      if (t <= c.from) break;
      if (t < c.to) return (c.from - skipped) * scale_ + breaks + kBreakPx * (t - c.from) / (c.to - c.from);
      skipped += c.to - c.from;
      breaks += kBreakPx;
    }
    return (t - skipped) * scale_ + breaks;
  }
  const std::vector<Cut>& cuts() const { return cuts_; }

 private:
  std::vector<Cut> cuts_;
  double scale_ = 0;
};

std::vector<Kernel> kernels_of(const json& timeline) {
  std::vector<Kernel> out;
  for (const json& k : timeline["kernels"]) out.push_back({k[0].get<double>(), k[1].get<double>(), k[2].get<std::size_t>()});
  std::sort(out.begin(), out.end(), [](const Kernel& a, const Kernel& b) { return a.start < b.start; });
  return out;
}

// The idle stretches (no kernel running) longer than `longest`: the result's timed median.
std::vector<Cut> idle_longer_than(const std::vector<Kernel>& kernels, double longest) {
  std::vector<Cut> cuts;
  double busy_until = 0;
  for (const Kernel& k : kernels) {
    if (k.start - busy_until > longest) cuts.push_back({busy_until, k.start});
    busy_until = std::max(busy_until, k.start + k.duration);
  }
  return cuts;
}

std::string break_svg(const RowAxis& axis, const Cut& c, double left, double y, double h, double median) {
  const double x = left + axis.x(c.from);
  return fmt::format(
      "<g class=\"gap-cut\"><rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" fill=\"#fff\"/>"
      "<path d=\"M{:.1f} {:.1f} l4 {:.1f} M{:.1f} {:.1f} l4 {:.1f}\" stroke=\"#888\" stroke-width=\"1.2\"/>"
      "<title>{} idle, cut out: host work between launches in the profiling pass (not kernel time; longer than the "
      "timed median {}, so in no timed sample)</title></g>\n",
      x, y, kBreakPx, h, x + 2, y + h, -h, x + 7, y + h, -h, format_seconds(c.to - c.from), format_seconds(median));
}

std::string row_svg(const Result& r, double y, double label_w, double track_w, double row_h) {
  const json& tl = r.profile["kernels"]["timeline"];
  const json& names = tl["names"];
  const std::vector<Kernel> kernels = kernels_of(tl);
  double span = 0;
  for (const Kernel& k : kernels) span = std::max(span, k.start + k.duration);
  const double median = r.timing ? r.timing->stats.median : 0;
  const RowAxis axis(median > 0 ? idle_longer_than(kernels, median) : std::vector<Cut>{}, span, track_w);
  const std::string label = r.variant + " " + html::params_text(r);
  std::string o = fmt::format(
      "<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"11\" text-anchor=\"end\">{}<title>{}</title></text>\n"
      "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" fill=\"#f6f6f6\"/>\n",
      label_w - 8, y + 14, escape(svg::elide(label, 42)), escape(label), label_w, y + 3, track_w, row_h - 6);
  for (const Kernel& k : kernels) {
    const std::string name = k.name < names.size() ? names[k.name].get<std::string>() : "?";
    const double x0 = axis.x(k.start), x1 = axis.x(k.start + k.duration);
    o += fmt::format("<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" fill=\"{}\">"
                     "<title>{}: {} at +{}</title></rect>\n",
                     label_w + x0, y + 3, std::max(1.0, x1 - x0), row_h - 6, svg::color(k.name), escape(name),
                     format_seconds(k.duration), format_seconds(k.start));
  }
  double cut = 0;
  for (const Cut& c : axis.cuts()) {
    o += break_svg(axis, c, label_w, y + 3, row_h - 6, median);
    cut += c.to - c.from;
  }
  const std::string right = format_seconds(span) + (tl.contains("truncated") ? "+" : "") +
                            (cut > 0 ? fmt::format(" ({} cut)", format_seconds(cut)) : "");
  return o + fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"11\">{}</text>\n", label_w + track_w + 6, y + 14,
                         escape(right));
}

// One row per result, its kernels to scale over the traced run's span.
std::string result_rows_svg(const std::vector<const Result*>& rows, std::size_t index) {
  const double label_w = 300, track_w = 540, right_w = 190, row_h = 22, top = 8;
  const double width = label_w + track_w + right_w, height = top + static_cast<double>(rows.size()) * row_h + 8;
  std::string o = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" id=\"kernel-timeline-{}\" class=\"tl\" viewBox=\"0 0 {:.0f} {:.0f}\" "
      "width=\"{:.0f}\" height=\"{:.0f}\" font-family=\"Helvetica, Arial, sans-serif\">\n"
      "<rect width=\"100%\" height=\"100%\" fill=\"#fff\"/>\n",
      index, width, height, width, height);
  double y = top;
  for (const Result* r : rows) {
    o += row_svg(*r, y, label_w, track_w, row_h);
    y += row_h;
  }
  return o + "</svg>\n";
}

bool has_timeline(const Result& r) {
  return r.profile.is_object() && r.profile.contains("kernels") && r.profile["kernels"].is_object() &&
         r.profile["kernels"].contains("timeline") && r.profile["kernels"]["timeline"].contains("kernels") &&
         !r.profile["kernels"]["timeline"]["kernels"].empty();
}

constexpr const char* kNote =
    "<p class=\"note\" id=\"timeline-note\">From the profiling pass, not the timed samples: each row is the first "
    "traced run of a result, a separate launch under CUPTI tracing after timing (the timed figures are in the Results "
    "table). Idle time between kernels is host work between launches, slowed by the tracing (launch overhead, "
    "first-launch module loading, host synchronisation), not kernel time. An idle stretch longer than the result's "
    "timed median, which no timed sample can contain, is cut out and drawn as a break (hover for its length); the "
    "figure at the right is the traced run's span, and how much of it was cut.</p>\n";

}  // namespace

std::string kernel_timelines_html(const Report& report) {
  std::vector<std::string> problems;
  for (const auto& r : report.results)
    if (std::find(problems.begin(), problems.end(), r.problem) == problems.end()) problems.push_back(r.problem);
  std::string o;
  std::size_t index = 0;
  for (const auto& p : problems) {
    std::vector<const Result*> rows;
    for (const auto& r : report.results)
      if (r.problem == p && has_timeline(r)) rows.push_back(&r);
    if (rows.empty()) continue;
    o += fmt::format("<details open><summary>{}: the kernels of one traced run per result, to scale ({} results)"
                     "</summary>\n",
                     escape(p), rows.size());
    o += result_rows_svg(rows, index++);
    o += "</details>\n";
  }
  if (o.empty())
    return "<p class=\"nochart\">No result carries a kernel timeline (profile.kernels.timeline: reports of a harness "
           "that did not record it, or runs with --no-profile).</p>\n";
  return kNote + o;
}

}  // namespace harness
