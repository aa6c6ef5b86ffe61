#include "render/report_svg.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

namespace harness::svg {

std::string elide(const std::string& text, std::size_t n) {
  return text.size() > n ? text.substr(0, n - 3) + "..." : text;
}

std::string escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char ch : text) {
    switch (ch) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += ch;
    }
  }
  return out;
}

std::string color(std::size_t i) {
  static const char* const kPalette[] = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
                                         "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#7f7f7f"};
  return kPalette[i % 10];
}

std::string ColorMap::operator()(const std::string& name) {
  auto [it, fresh] = index_.try_emplace(name, index_.size());
  return color(it->second);
}

namespace {

bool is_power_of_two(double v) {
  if (!(v >= 1) || v != std::floor(v) || v > 9.007199254740992e15) return false;
  const auto u = static_cast<unsigned long long>(v);
  return (u & (u - 1)) == 0;
}

std::string trim_number(double v) {
  // Up to 3 significant digits, no trailing zeros.
  std::string s = fmt::format("{:.3g}", v);
  if (s.find('e') != std::string::npos) s = fmt::format("{:g}", v);
  return s;
}

}  // namespace

std::string tick_label(double v, TickStyle style) {
  if (v == 0) return "0";
  const double a = std::fabs(v);
  if (style == TickStyle::bytes) {
    const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
    int u = 0;
    double x = v;
    while (std::fabs(x) >= 1024 && u < 5) {
      x /= 1024;
      ++u;
    }
    return fmt::format("{} {}", trim_number(x), units[u]);
  }
  if (style == TickStyle::binary && is_power_of_two(a)) {
    if (a >= 131072) return fmt::format("{}2^{}", v < 0 ? "-" : "", static_cast<int>(std::lround(std::log2(a))));
    return fmt::format("{}", static_cast<long long>(v));
  }
  if (a >= 1e12) return trim_number(v / 1e12) + "T";
  if (a >= 1e9) return trim_number(v / 1e9) + "G";
  if (a >= 1e6) return trim_number(v / 1e6) + "M";
  if (a >= 1e4) return trim_number(v / 1e3) + "k";
  if (a >= 1e-3) {
    std::string s = fmt::format("{:.4f}", v);
    while (!s.empty() && s.back() == '0') s.pop_back();
    if (!s.empty() && s.back() == '.') s.pop_back();
    return s;
  }
  return fmt::format("{:.0e}", v);
}

namespace {

struct Scale {
  double lo = 0, hi = 1;     // data range shown
  bool log = false;
  std::vector<double> ticks;
  double t(double v) const { return log ? std::log10(v) : v; }
  // 0..1 along the axis
  double frac(double v) const {
    const double a = t(lo), b = t(hi);
    return b > a ? (t(v) - a) / (b - a) : 0.5;
  }
};

double nice_step(double range, int target) {
  const double raw = range / target;
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  const double r = raw / mag;
  const double m = r <= 1 ? 1 : r <= 2 ? 2 : r <= 2.5 ? 2.5 : r <= 5 ? 5 : 10;
  return m * mag;
}

Scale make_scale(const Axis& axis, double dmin, double dmax) {
  Scale s;
  s.log = axis.log;
  if (!std::isfinite(dmin) || !std::isfinite(dmax)) {
    dmin = axis.log ? 1 : 0;
    dmax = axis.log ? 10 : 1;
  }
  if (axis.log) {
    dmin = std::max(dmin, 1e-300);
    dmax = std::max(dmax, dmin);
    if (axis.ticks == TickStyle::binary || axis.ticks == TickStyle::bytes) {
      double lo = std::floor(std::log2(dmin)), hi = std::ceil(std::log2(dmax));
      if (hi - lo < 1) {
        lo -= 1;
        hi += 1;
      }
      s.lo = std::exp2(lo);
      s.hi = std::exp2(hi);
      const int step = std::max(1, static_cast<int>(std::ceil((hi - lo) / 9)));
      for (double e = lo; e <= hi + 1e-9; e += step) s.ticks.push_back(std::exp2(e));
      return s;
    }
    double lo = std::floor(std::log10(dmin) + 1e-9), hi = std::ceil(std::log10(dmax) - 1e-9);
    if (hi - lo < 1) {
      // Less than a decade: stay close to the data.
      s.lo = dmin / 1.25;
      s.hi = dmax * 1.25;
      if (s.hi / s.lo < 2) {
        s.lo = std::pow(10.0, lo);
        s.hi = std::pow(10.0, lo + 1);
      }
    } else {
      s.lo = std::pow(10.0, lo);
      s.hi = std::pow(10.0, hi);
    }
    const double decades = std::log10(s.hi / s.lo);
    const int step = std::max(1, static_cast<int>(std::ceil(decades / 9)));
    for (double e = std::floor(std::log10(s.lo)); e <= std::ceil(std::log10(s.hi)); e += step) {
      for (double m : decades <= 2.5 ? std::vector<double>{1, 2, 5} : std::vector<double>{1}) {
        const double v = m * std::pow(10.0, e);
        if (v >= s.lo * (1 - 1e-9) && v <= s.hi * (1 + 1e-9)) s.ticks.push_back(v);
      }
    }
    return s;
  }
  double lo = axis.from_zero ? std::min(0.0, dmin) : dmin, hi = dmax;
  if (hi <= lo) {
    const double pad = lo == 0 ? 1 : std::fabs(lo) * 0.1;
    lo -= axis.from_zero && lo == 0 ? 0 : pad;
    hi += pad;
  }
  const double step = nice_step(hi - lo, 6);
  s.lo = std::floor(lo / step + 1e-9) * step;
  s.hi = std::ceil(hi / step - 1e-9) * step;
  if (s.hi == hi && !axis.from_zero) s.hi += step;  // headroom above the highest point
  if (s.hi == hi && axis.from_zero && hi > 0) s.hi += step;
  for (double v = s.lo; v <= s.hi + step * 1e-6; v += step) s.ticks.push_back(std::fabs(v) < step * 1e-9 ? 0 : v);
  return s;
}

}  // namespace

namespace {

// Where a chart's parts go: title band, plot, x label band; legend to the right.
struct Plot {
  const Chart& c;
  double left = 78, top = 0, legend_w = 230, bottom = 58, plot_w = 0, height = 0, plot_h = 0;
  Scale sx, sy;
  // Points at the ends of the range stay whole: the data area is inset from the frame.
  static constexpr double inset = 10;

  explicit Plot(const Chart& chart);
  double px(double x) const { return left + inset + sx.frac(x) * (plot_w - 2 * inset); }
  double py(double y) const { return top + inset + (1 - sy.frac(y)) * (plot_h - 2 * inset); }
  bool visible(double x, double y) const {
    return std::isfinite(x) && std::isfinite(y) && (!c.x.log || x > 0) && (!c.y.log || y > 0);
  }
  std::string series_color(std::size_t i) const { return c.series[i].color.empty() ? color(i) : c.series[i].color; }
  std::string x_tick_text(double t) const {
    for (const auto& [x, label] : c.x.categories)
      if (x == t) return label;
    return tick_label(t, c.x.ticks);
  }
};

Plot::Plot(const Chart& chart) : c(chart) {
  top = c.subtitle.empty() ? 46 : 62;
  plot_w = c.width - left - legend_w - 16;
  const double legend_rows =
      static_cast<double>(c.series.size() + c.refs.size() + (c.edge_markers.empty() ? 0 : 1));
  height = std::max(static_cast<double>(c.height), top + legend_rows * 20 + 30);
  plot_h = height - top - bottom;

  // Data extents (only values a log axis can show).
  double xmin = std::numeric_limits<double>::infinity(), xmax = -xmin, ymin = xmin, ymax = -xmin;
  auto take = [&](double x, double y, bool with_y) {
    if (std::isfinite(x) && (!c.x.log || x > 0)) {
      xmin = std::min(xmin, x);
      xmax = std::max(xmax, x);
    }
    if (with_y && std::isfinite(y) && (!c.y.log || y > 0)) {
      ymin = std::min(ymin, y);
      ymax = std::max(ymax, y);
    }
  };
  for (const auto& s : c.series)
    for (const auto& p : s.points) take(p.x, p.y, true);
  for (const auto& r : c.refs)
    if (r.sets_range)
      for (const auto& [x, y] : r.points) take(x, y, true);
  for (const auto& m : c.edge_markers) take(m.x, 0, false);
  for (const auto& [x, label] : c.x.categories) take(x, 0, false);
  for (const auto& s : c.series)
    for (const auto& p : s.points) {
      if (std::isfinite(p.lo)) take(p.x, p.lo, true);
      if (std::isfinite(p.hi)) take(p.x, p.hi, true);
    }
  sx = make_scale(c.x, xmin, xmax);
  sy = make_scale(c.y, ymin, ymax);
  if (!c.x.categories.empty()) {
    sx.ticks.clear();
    for (const auto& [x, label] : c.x.categories) sx.ticks.push_back(x);
  }
}

// The svg element's head, the titles, the grid, the ticks and the axis labels.
std::string frame(const Plot& g) {
  const Chart& c = g.c;
  const double left = g.left, top = g.top, plot_w = g.plot_w, plot_h = g.plot_h;
  std::string o;
  o += fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" id=\"{}\" class=\"chart\" viewBox=\"0 0 {} {:.0f}\" "
      "width=\"{}\" height=\"{:.0f}\" role=\"img\" aria-label=\"{}\" font-family=\"Helvetica, Arial, sans-serif\">\n",
      escape(c.id), c.width, g.height, c.width, g.height, escape(c.title));
  o += fmt::format("<title>{}</title>\n", escape(c.title));
  o += fmt::format("<rect x=\"0\" y=\"0\" width=\"{}\" height=\"{:.0f}\" fill=\"#ffffff\"/>\n", c.width, g.height);
  o += fmt::format("<text x=\"{:.1f}\" y=\"24\" font-size=\"16\" font-weight=\"bold\" fill=\"#222\">{}</text>\n", left,
                   escape(c.title));
  if (!c.subtitle.empty())
    o += fmt::format("<text x=\"{:.1f}\" y=\"44\" font-size=\"12\" fill=\"#555\">{}</text>\n", left,
                     escape(c.subtitle));

  // Grid and ticks.
  o += "<g class=\"grid\" stroke=\"#e3e3e3\" stroke-width=\"1\">\n";
  for (double t : g.sx.ticks)
    o += fmt::format("<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{0:.1f}\" y2=\"{2:.1f}\"/>\n", g.px(t), top, top + plot_h);
  for (double t : g.sy.ticks)
    o += fmt::format("<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{2:.1f}\" y2=\"{1:.1f}\"/>\n", left, g.py(t), left + plot_w);
  o += "</g>\n";
  o += fmt::format("<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" fill=\"none\" stroke=\"#888\"/>\n",
                   left, top, plot_w, plot_h);
  o += "<g class=\"ticks\" font-size=\"11\" fill=\"#333\">\n";
  for (double t : g.sx.ticks)
    o += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">{}</text>\n", g.px(t), top + plot_h + 16,
                     escape(g.x_tick_text(t)));
  for (double t : g.sy.ticks)
    o += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"end\">{}</text>\n", left - 6, g.py(t) + 4,
                     escape(tick_label(t, c.y.ticks)));
  o += "</g>\n";
  o += fmt::format("<text class=\"xlabel\" x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"13\" text-anchor=\"middle\" fill=\"#222\">{}</text>\n",
                   left + plot_w / 2, top + plot_h + 40, escape(c.x.label));
  o += fmt::format(
      "<text class=\"ylabel\" x=\"0\" y=\"0\" font-size=\"13\" text-anchor=\"middle\" fill=\"#222\" "
      "transform=\"translate({:.1f} {:.1f}) rotate(-90)\">{}</text>\n",
      18.0, top + plot_h / 2, escape(c.y.label));
  return o;
}

// One series: its band (a polygon, or a line per point), its line, markers and flags.
std::string series_svg(const Plot& g, std::size_t i) {
  const auto& s = g.c.series[i];
  std::vector<Point> pts;
  for (const auto& p : s.points)
    if (g.visible(p.x, p.y)) pts.push_back(p);
  std::stable_sort(pts.begin(), pts.end(), [](const Point& a, const Point& b) { return a.x < b.x; });
  const std::string col = g.series_color(i);
  std::string o = fmt::format("<g class=\"series\" data-label=\"{}\">\n", escape(s.label));
  bool all_banded = s.line && pts.size() > 1;
  for (const auto& p : pts) all_banded = all_banded && std::isfinite(p.lo) && std::isfinite(p.hi) && g.visible(p.x, p.lo) && g.visible(p.x, p.hi);
  if (all_banded) {
    std::string poly;
    for (const auto& p : pts) poly += fmt::format("{:.1f},{:.1f} ", g.px(p.x), g.py(p.hi));
    for (auto it = pts.rbegin(); it != pts.rend(); ++it) poly += fmt::format("{:.1f},{:.1f} ", g.px(it->x), g.py(it->lo));
    o += fmt::format("<polygon class=\"band\" points=\"{}\" fill=\"{}\" fill-opacity=\"0.18\" stroke=\"none\"/>\n", poly, col);
  } else {
    for (const auto& p : pts)
      if (std::isfinite(p.lo) && std::isfinite(p.hi) && g.visible(p.x, p.lo) && g.visible(p.x, p.hi))
        o += fmt::format("<line class=\"band\" x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{0:.1f}\" y2=\"{2:.1f}\" stroke=\"{3}\" stroke-width=\"2\" stroke-opacity=\"0.5\"/>\n",
                         g.px(p.x), g.py(p.lo), g.py(p.hi), col);
  }
  const bool markers = s.markers || pts.size() == 1 || !s.line;
  if (s.line && pts.size() > 1) {
    std::string line;
    for (const auto& p : pts) line += fmt::format("{:.1f},{:.1f} ", g.px(p.x), g.py(p.y));
    if (markers)
      o += fmt::format("<polyline points=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"2\"/>\n", line, col);
    else
      o += fmt::format("<polyline points=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"1.6\" "
                       "stroke-linejoin=\"round\"><title>{}</title></polyline>\n",
                       line, col, escape(s.label));
  }
  if (markers)
    for (const auto& p : pts)
      o += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"4.5\" fill=\"{}\" stroke=\"#fff\" stroke-width=\"1\">"
                       "<title>{}</title></circle>\n",
                       g.px(p.x), g.py(p.y), col, escape(p.tip));
  for (const auto& p : pts)
    if (p.flagged)
      o += fmt::format("<circle class=\"flag\" cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"9\" fill=\"none\" stroke=\"#d00000\" "
                       "stroke-width=\"2.5\"><title>{}</title></circle>\n",
                       g.px(p.x), g.py(p.y), escape(p.tip));
  return o + "</g>\n";
}

// Everything in data coordinates, clipped to the plot, then the edge markers.
std::string data_svg(const Plot& g) {
  const Chart& c = g.c;
  const std::string clip = c.id + "-clip";
  std::string o = fmt::format("<clipPath id=\"{}\"><rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\"/></clipPath>\n",
                              escape(clip), g.left, g.top, g.plot_w, g.plot_h);
  o += fmt::format("<g clip-path=\"url(#{})\">\n", escape(clip));
  for (const auto& r : c.refs) {
    if (r.color == "none") continue;
    std::string pts;
    for (const auto& [x, y] : r.points)
      if (g.visible(x, y)) pts += fmt::format("{:.1f},{:.1f} ", g.px(x), g.py(y));
    o += fmt::format("<polyline class=\"ref\" points=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"2\" "
                     "stroke-dasharray=\"7 4\"><title>{}</title></polyline>\n",
                     pts, r.color, escape(r.label));
  }
  for (std::size_t i = 0; i < c.series.size(); ++i) o += series_svg(g, i);
  o += "</g>\n";
  for (const auto& m : c.edge_markers) {
    if (c.x.log && !(m.x > 0)) continue;
    const double x = g.px(m.x), y = g.top + 10;
    o += fmt::format(
        "<g class=\"edge-marker\"><path d=\"M{0:.1f},{1:.1f} l8,8 m0,-8 l-8,8\" transform=\"translate(-4 -4)\" "
        "stroke=\"{2}\" stroke-width=\"3\"/><title>{3}</title></g>\n",
        x, y, m.series < c.series.size() ? g.series_color(m.series) : color(m.series), escape(m.tip));
  }
  return o;
}

std::string legend_svg(const Plot& g) {
  const Chart& c = g.c;
  const double lx = g.left + g.plot_w + 16;
  double ly = g.top + 6;
  // Long labels are shortened to fit in the middle, keeping their end, which is what tells
  // variants of one name apart ("pytorch_bf...=reduce-overhead", "...causal=true"); the
  // whole label is the tooltip.
  auto legend_text = [&](const std::string& label) {
    constexpr std::size_t kMax = 30, kHead = 10;
    if (label.size() <= kMax)
      return fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\">{}</text>", lx + 30, ly + 4, escape(label));
    return fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\">{}...{}<title>{}</title></text>", lx + 30, ly + 4,
                       escape(label.substr(0, kHead)), escape(label.substr(label.size() - (kMax - 3 - kHead))),
                       escape(label));
  };
  std::string o = "<g class=\"legend\" font-size=\"12\" fill=\"#222\">\n";
  for (std::size_t i = 0; i < c.series.size(); ++i) {
    o += fmt::format("<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"{}\" stroke-width=\"2\"/>",
                     lx, ly, lx + 22, ly, c.series[i].line ? g.series_color(i) : "none");
    if (c.series[i].markers || !c.series[i].line)
      o += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"4.5\" fill=\"{}\"/>", lx + 11, ly, g.series_color(i));
    o += legend_text(c.series[i].label) + "\n";
    ly += 20;
  }
  for (const auto& r : c.refs) {
    if (r.label.empty() || r.color == "none") continue;
    o += fmt::format("<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"{}\" stroke-width=\"2\" "
                     "stroke-dasharray=\"7 4\"/>",
                     lx, ly, lx + 22, ly, r.color);
    o += legend_text(r.label) + "\n";
    ly += 20;
  }
  if (!c.edge_markers.empty()) {
    o += fmt::format("<path d=\"M{:.1f},{:.1f} l8,8 m0,-8 l-8,8\" stroke=\"#333\" stroke-width=\"3\"/>", lx + 7, ly - 4);
    o += legend_text(c.edge_marker_label) + "\n";
  }
  return o + "</g>\n";
}

}  // namespace

std::string render(const Chart& c) {
  const Plot g(c);
  return frame(g) + data_svg(g) + legend_svg(g) + "</svg>\n";
}

}  // namespace harness::svg
