#include "render/report_curves.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <map>
#include <set>

#include <fmt/format.h>

#include "core/units.hpp"
#include "render/report_html.hpp"
#include "render/report_render.hpp"

namespace harness {

namespace {

constexpr std::string_view kSuffix = "_curve";

using Pairs = std::vector<std::pair<std::string, std::string>>;

// The configuration of a result as (parameter, value) pairs: from its name without the
// variant ("train_transformer/ours/batch:100/graph:false" -> batch=100, graph=false) when
// the name has that form, as both `harness run` and reports/pytorch_transformer.py write
// it (PyTorch's params leave out the engine-only ones its name keeps); else its params.
Pairs config_pairs(const Result& r) {
  Pairs out;
  const std::string head = r.problem + "/" + r.variant;
  if (r.name.rfind(head, 0) == 0 && (r.name.size() == head.size() || r.name[head.size()] == '/')) {
    bool ok = true;
    for (std::size_t pos = head.size(); ok && pos < r.name.size();) {
      const std::size_t end = std::min(r.name.find('/', pos + 1), r.name.size());
      const std::string seg = r.name.substr(pos + 1, end - pos - 1);
      const std::size_t colon = seg.find(':');
      ok = colon != std::string::npos && colon > 0;
      if (ok) out.emplace_back(seg.substr(0, colon), seg.substr(colon + 1));
      pos = end;
    }
    if (ok) return out;
    out.clear();
  }
  for (const auto& [n, v] : r.params.entries()) out.emplace_back(n, html::value_text(v));
  return out;
}

// A value for grouping: numbers by value (1 and 1.0 from two writers match).
std::string value_key(const std::string& v) {
  char* end = nullptr;
  const double d = std::strtod(v.c_str(), &end);
  return !v.empty() && end == v.c_str() + v.size() ? fmt::format("{}", d) : v;
}

// Problem and every parameter by name (the order of two reports may differ).
std::string config_key(const Result& r) {
  std::map<std::string, std::string> sorted;
  for (const auto& [n, v] : config_pairs(r)) sorted[n] = value_key(v);
  std::string key = r.problem;
  for (const auto& [n, v] : sorted) key += fmt::format("\x1f{}={}", n, v);
  return key;
}


}  // namespace

std::vector<Curve> curves_of(const Result& r) {
  std::vector<Curve> out;
  if (!r.extra.is_object()) return out;
  for (const auto& [key, value] : r.extra.items()) {
    if (key.size() <= kSuffix.size() || key.compare(key.size() - kSuffix.size(), kSuffix.size(), kSuffix) != 0 ||
        !value.is_array())
      continue;
    Curve c;
    c.name = key.substr(0, key.size() - kSuffix.size());
    bool any = false;
    for (const auto& v : value) {
      if (v.is_number()) {
        c.values.push_back(v.get<double>());
        any = true;
      } else if (v.is_null()) {
        c.values.push_back(std::nan(""));
      } else {
        any = false;  // not a series of numbers: not a curve
        break;
      }
    }
    if (!any) continue;
    if (const auto it = r.extra.find(key + "_stride"); it != r.extra.end() && it->is_number()) {
      const double s = it->get<double>();
      if (s >= 1 && s == std::floor(s) && s <= 1e9) c.stride = static_cast<std::size_t>(s);
    }
    out.push_back(std::move(c));
  }
  return out;
}

namespace {
std::vector<const Result*> pointers(const std::vector<Result>& rows) {
  std::vector<const Result*> out;
  for (const Result& r : rows) out.push_back(&r);
  return out;
}
}  // namespace

std::vector<CurveGroup> curve_groups(const std::vector<Result>& rows) { return curve_groups(pointers(rows)); }

std::vector<CurveGroup> curve_groups(const std::vector<const Result*>& rows, const std::vector<std::string>& sources) {
  std::vector<CurveGroup> groups;
  std::map<std::string, std::size_t> index;  // config key + name -> group
  for (std::size_t ri = 0; ri < rows.size(); ++ri) {
    const Result& r = *rows[ri];
    for (Curve& c : curves_of(r)) {
      const std::string key = config_key(r) + "\x1e" + c.name;
      auto [it, fresh] = index.try_emplace(key, groups.size());
      if (fresh) {
        groups.emplace_back();
        groups.back().problem = r.problem;
        groups.back().name = c.name;
      }
      CurveGroup& g = groups[it->second];
      std::size_t same = 1;
      for (const auto& m : g.members) same += m.result->variant == r.variant;
      std::string label = r.variant;
      if (ri < sources.size()) label += " (" + sources[ri] + ")";  // relabelled below when unique
      else if (same > 1) label = fmt::format("{} ({})", r.variant, same);
      g.members.push_back({label, &r, std::move(c)});
    }
  }
  // With sources, a variant that appears once in its group keeps its plain name.
  if (!sources.empty())
    for (auto& g : groups)
      for (auto& m : g.members)
        if (std::count_if(g.members.begin(), g.members.end(),
                          [&](const auto& o) { return o.result->variant == m.result->variant; }) == 1)
          m.label = m.result->variant;
  // Per problem: the parameters that tell its configurations apart, and the rest.
  std::map<std::string, std::map<std::string, std::set<std::string>>> values;  // problem -> param -> values
  std::map<std::string, std::vector<std::string>> order;                        // problem -> params, first seen
  for (const auto& g : groups)
    for (const auto& m : g.members)
      for (const auto& [n, v] : config_pairs(*m.result)) {
        auto& seen = order[g.problem];
        if (std::find(seen.begin(), seen.end(), n) == seen.end()) seen.push_back(n);
        values[g.problem][n].insert(value_key(v));
      }
  for (auto& g : groups) {
    const Pairs pairs = config_pairs(*g.members.front().result);
    std::vector<std::string> varying, fixed;
    for (const auto& n : order[g.problem]) {
      const auto it = std::find_if(pairs.begin(), pairs.end(), [&](const auto& p) { return p.first == n; });
      // A parameter some configurations lack differs between them too.
      const bool differs = values[g.problem][n].size() > 1 || it == pairs.end();
      (differs ? varying : fixed).push_back(fmt::format("{}={}", n, it == pairs.end() ? "-" : it->second));
    }
    g.config = fmt::format("{}", fmt::join(varying, " "));
    g.fixed = fmt::format("{}", fmt::join(fixed, ", "));
  }
  return groups;
}

CurveTable curve_table(const CurveGroup& group) {
  CurveTable t;
  double longest = 0;
  for (const auto& m : group.members) longest = std::max(longest, m.curve.last_step());
  std::vector<double> at_steps;
  for (double f : {0.0, 0.25, 0.5, 0.75}) {
    const double s = std::round(f * longest);
    if (std::find(at_steps.begin(), at_steps.end(), s) == at_steps.end()) at_steps.push_back(s);
  }
  for (double s : at_steps) t.head.push_back(fmt::format("step {}", s));
  t.head.insert(t.head.end(), {"last", "last step", "mean of last 10%"});
  for (const auto& m : group.members) {
    const Curve& c = m.curve;
    std::vector<std::string> cells;
    for (double s : at_steps) {
      // The recorded step at or before s.
      const auto i = static_cast<std::size_t>(s / static_cast<double>(c.stride));
      cells.push_back(s <= c.last_step() && i < c.values.size() ? format_curve_value(c.values[i]) : "-");
    }
    cells.push_back(format_curve_value(c.values.back()));
    cells.push_back(fmt::format("{}", c.last_step()));
    const std::size_t tail = std::max<std::size_t>(1, (c.values.size() + 9) / 10);
    double sum = 0;
    std::size_t n = 0;
    for (std::size_t i = c.values.size() - tail; i < c.values.size(); ++i)
      if (std::isfinite(c.values[i])) sum += c.values[i], ++n;
    cells.push_back(n ? format_curve_value(sum / static_cast<double>(n)) : "-");
    t.rows.emplace_back(m.label, std::move(cells));
  }
  return t;
}

}  // namespace harness

namespace harness {

std::string curve_tables_markdown(const std::vector<const Result*>& rows) {
  std::string o;
  for (const auto& g : curve_groups(rows)) {
    const CurveTable t = curve_table(g);
    o += fmt::format("\n**{}** per step{}:\n\n| variant |", md_escape(g.name), g.config.empty() ? "" : ", " + md_escape(g.config));
    for (const auto& h : t.head) o += fmt::format(" {} |", md_escape(h));
    o += "\n|---|";
    for (std::size_t i = 0; i < t.head.size(); ++i) o += "---:|";
    o += "\n";
    for (const auto& [label, cells] : t.rows) {
      o += fmt::format("| {} |", md_escape(label));
      for (const auto& c : cells) o += fmt::format(" {} |", c);
      o += "\n";
    }
  }
  return o;
}

std::string curve_section_html(const std::vector<Result>& rows, svg::ColorMap& colors) {
  return curve_section_html(pointers(rows), colors);
}

std::string curve_section_html(const std::vector<const Result*>& rows, svg::ColorMap& colors,
                               const std::vector<std::string>& sources) {
  const auto groups = curve_groups(rows, sources);
  if (groups.empty()) return "";
  std::string o = fmt::format(
      "<h2 id=\"curves\">Curves per step</h2>\n<p class=\"note\">Series the results record per step (<code>extra.NAME_curve</code>, one value every "
      "<code>NAME_curve_stride</code> steps): one chart per configuration (the parameters without the variant), one "
      "line per variant. Under each chart: {}.</p>\n",
      kCurveTableDescription);
  std::string problem;
  for (std::size_t gi = 0; gi < groups.size(); ++gi) {
    const CurveGroup& g = groups[gi];
    if (g.problem != problem) {
      problem = g.problem;
      o += fmt::format("<h3>{}</h3>\n", svg::escape(problem));
      if (!g.fixed.empty()) o += fmt::format("<p>Fixed parameters: {}</p>\n", svg::escape(g.fixed));
    }
    svg::Chart c;
    c.id = fmt::format("curve-{}", gi);
    c.title = fmt::format("{}: {} against step", g.problem, g.name);
    c.subtitle = (g.config.empty() ? std::string() : g.config + "; ") + "one line per variant";
    c.width = 1080;  // long series: room along x
    std::size_t stride = 1;
    double lo = std::numeric_limits<double>::infinity(), hi = 0;
    for (const auto& m : g.members) {
      svg::Series s;
      s.label = m.label;
      s.color = colors(m.label);  // a repeated variant (two runs) gets a color per run
      s.markers = false;
      // At most ~2000 points a line (the plugins record up to 2000): a longer series is thinned.
      const std::size_t n = m.curve.values.size(), every = n > 4000 ? (n + 1999) / 2000 : 1;
      std::vector<std::size_t> shown;
      for (std::size_t i = 0; i < n; i += every) shown.push_back(i);
      if (shown.back() != n - 1) shown.push_back(n - 1);  // the last value stays
      for (const std::size_t i : shown) {
        const double v = m.curve.values[i];
        if (!std::isfinite(v)) continue;
        s.points.push_back({m.curve.step(i), v, fmt::format("{}: {} {} at step {}", m.label, g.name, format_curve_value(v), m.curve.step(i))});
        lo = std::min(lo, v);
        hi = std::max(hi, v);
      }
      stride = std::max(stride, m.curve.stride);
      c.series.push_back(std::move(s));
    }
    c.x.label = stride > 1 ? fmt::format("step (a value every {} steps)", stride) : "step";
    c.x.from_zero = true;
    c.y.label = g.name;
    c.y.log = lo > 0 && hi / lo >= 100;  // decades apart: a log axis keeps the tail readable
    o += svg::render(c);
    const CurveTable t = curve_table(g);
    o += "<table class=\"curve\">\n<thead><tr><th>variant</th>";
    for (const auto& h : t.head) o += fmt::format("<th>{}</th>", svg::escape(h));
    o += "</tr></thead>\n<tbody>\n";
    for (const auto& [label, cells] : t.rows) {
      o += fmt::format("<tr><td>{}</td>", svg::escape(label));
      for (const auto& cell : cells) o += fmt::format("<td class=\"num\">{}</td>", svg::escape(cell));
      o += "</tr>\n";
    }
    o += "</tbody>\n</table>\n";
  }
  return o;
}

}  // namespace harness
