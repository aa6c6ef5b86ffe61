#include "render/compare_html.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include <fmt/format.h>

#include "render/report_html.hpp"
#include "render/report_svg.hpp"
#include "core/units.hpp"

namespace harness {

namespace {

using svg::escape;

// Order: failed, slower, ambiguous, missing, new, faster, same, skipped; then |change| descending.
int verdict_rank(Verdict v) {
  switch (v) {
    case Verdict::failed: return 0;
    case Verdict::slower: return 1;
    case Verdict::ambiguous: return 1;
    case Verdict::suspicious: return 1;
    case Verdict::missing: return 2;
    case Verdict::new_: return 3;
    case Verdict::faster: return 4;
    case Verdict::same: return 5;
    case Verdict::skipped: return 6;
  }
  return 7;
}

std::string time_text(const std::optional<double>& s) { return s ? format_seconds(*s) : "-"; }

// The environment as "gpu.name" -> value lines (nested objects flattened, arrays dumped).
void flatten(const nlohmann::json& j, const std::string& prefix, std::map<std::string, std::string>& out) {
  if (j.is_object()) {
    for (const auto& [k, v] : j.items()) flatten(v, prefix.empty() ? k : prefix + "." + k, out);
  } else {
    out[prefix] = j.is_string() ? j.get<std::string>() : j.dump();
  }
}

struct GeoRow {
  std::string label;
  double ratio = 1;
  std::size_t n = 0;
  bool problem = false;  // a problem's total (bold)
};

// Per problem, then per variant of it: the geometric mean of candidate/baseline median
// time over the pairs timed on both sides.
std::vector<GeoRow> geo_rows(const Comparison& c) {
  std::vector<GeoRow> out;
  for (const auto& p : c.problems) {
    out.push_back({p.problem, p.geomean_ratio, p.compared, true});
    std::vector<std::string> variants;
    std::map<std::string, std::pair<double, std::size_t>> acc;
    for (const auto& pr : c.pairs) {
      if (pr.problem != p.problem || !pr.base_median || !pr.cand_median || *pr.base_median <= 0 || *pr.cand_median <= 0)
        continue;
      if (!acc.count(pr.variant)) variants.push_back(pr.variant);
      auto& a = acc[pr.variant];
      a.first += std::log(*pr.cand_median / *pr.base_median);
      ++a.second;
    }
    if (variants.size() < 2) continue;
    for (const auto& v : variants)
      out.push_back({"  " + v, std::exp(acc[v].first / static_cast<double>(acc[v].second)), acc[v].second, false});
  }
  return out;
}

// Horizontal bars of the geometric mean ratios around 1 (log scale).
std::string geomean_bars(const std::vector<GeoRow>& rows) {
  const double label_w = 220, plot_w = 560, row_h = 22, top = 44;
  const double height = top + static_cast<double>(rows.size()) * row_h + 34, width = label_w + plot_w + 120;
  double m = 1.1;
  for (const auto& r : rows)
    if (r.n && r.ratio > 0) m = std::max({m, r.ratio, 1 / r.ratio});
  m *= 1.1;
  auto px = [&](double r) { return label_w + (std::log(r) / std::log(m) + 1) / 2 * plot_w; };
  std::string o = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" id=\"geomean\" class=\"bars\" viewBox=\"0 0 {0:.0f} {1:.0f}\" "
      "width=\"{0:.0f}\" height=\"{1:.0f}\" font-family=\"Helvetica, Arial, sans-serif\">\n"
      "<rect width=\"100%\" height=\"100%\" fill=\"#fff\"/>\n"
      "<text x=\"8\" y=\"20\" font-size=\"15\" font-weight=\"bold\">Geometric mean of candidate / baseline median "
      "time, per problem and variant</text>\n<text x=\"8\" y=\"36\" font-size=\"12\" fill=\"#555\">left of 1: the "
      "candidate is faster; right: slower (log scale)</text>\n",
      width, height);
  double y = top;
  for (const auto& r : rows) {
    o += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"12\" text-anchor=\"end\"{}>{}</text>\n", label_w - 8,
                     y + 15, r.problem ? " font-weight=\"bold\"" : "", escape(r.label));
    if (r.n && r.ratio > 0) {
      const double a = px(1), b = px(r.ratio);
      o += fmt::format("<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"14\" fill=\"{}\"><title>{}: {}x "
                       "over {} results</title></rect>\n",
                       std::min(a, b), y + 4, std::max(1.0, std::fabs(b - a)), svg::color(0), escape(r.label),
                       format_3sig(r.ratio), r.n);
      o += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"11\">{}x</text>\n", std::max(a, b) + 4, y + 15,
                       format_3sig(r.ratio));
    }
    y += row_h;
  }
  o += fmt::format("<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{0:.1f}\" y2=\"{2:.1f}\" stroke=\"#222\" "
                   "stroke-dasharray=\"5 3\"/>\n",
                   px(1), top, y);
  for (double t : {1 / m, 1.0, m})
    o += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"11\" text-anchor=\"middle\">{}x</text>\n", px(t),
                     y + 16, format_3sig(t));
  return o + "</svg>\n";
}

}  // namespace

int comparison_exit_code(const Comparison& c) { return c.regression ? 1 : 0; }

namespace {

std::string problems_section(const Comparison& c) {
  std::string o;
  o += "<h2>Per problem</h2>\n";
  o += geomean_bars(geo_rows(c));
  o += "<table><thead><tr><th>problem</th><th>fixed parameters</th><th>geometric mean (cand/base time)</th>"
       "<th>compared</th><th>slower</th><th>faster</th><th>ambiguous</th><th>same</th><th>failed</th><th>new</th><th>missing</th>"
       "</tr></thead><tbody>\n";
  for (const auto& p : c.problems)
    o += fmt::format("<tr><td>{}</td><td>{}</td><td class=\"num {}\">{}x</td><td class=\"num\">{}</td><td class=\"num\">{}"
                     "</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}"
                     "</td><td class=\"num\">{}</td><td class=\"num\">{}</td></tr>\n",
                     escape(p.problem), escape(p.fixed_params),
                     p.geomean_ratio > 1 + c.options.threshold   ? "bad"
                     : p.geomean_ratio < 1 - c.options.threshold ? "good"
                                                                  : "",
                     format_3sig(p.geomean_ratio), p.compared, p.slower, p.faster, p.ambiguous, p.same, p.failed, p.new_, p.missing);
  o += "</tbody></table>\n";

  return o;
}

std::string results_section(const Comparison& c) {
  std::string o;
  o += "<h2>Results, by effect</h2>\n";
  std::vector<const Pair*> sorted;
  for (const auto& p : c.pairs) sorted.push_back(&p);
  std::stable_sort(sorted.begin(), sorted.end(), [](const Pair* a, const Pair* b) {
    const int ra = verdict_rank(a->verdict), rb = verdict_rank(b->verdict);
    if (ra != rb) return ra < rb;
    return std::fabs(a->change.value_or(0)) > std::fabs(b->change.value_or(0));
  });
  o += "<table class=\"verdicts\"><thead><tr><th>verdict</th><th>result</th><th>baseline</th><th>candidate</th>"
       "<th>change</th><th>confidence</th><th>samples</th><th>note</th></tr></thead><tbody>\n";
  for (const Pair* p : sorted) {
    const std::string verdict(to_string(p->verdict));
    std::string confidence = "-";
    if (p->p_value)
      confidence = fmt::format("p = {:.2g}{}{}", *p->p_value, p->exact_test ? " (exact)" : "",
                               p->effect_size ? fmt::format(", Cliff's delta {:+.2f}", *p->effect_size) : "");
    o += fmt::format("<tr class=\"{0}\"><td class=\"verdict\">{0}</td><td class=\"name\">{1}</td><td class=\"num\">{2}</td>"
                     "<td class=\"num\">{3}</td><td class=\"num\">{4}</td><td>{5}</td><td class=\"num\">{6} / {7}</td>"
                     "<td>{8}</td></tr>\n",
                     escape(verdict), escape(p->display), time_text(p->base_median),
                     time_text(p->cand_median), p->change ? format_change(*p->change) : "-",
                     escape(confidence), p->base_n, p->cand_n, escape(p->note));
  }
  o += "</tbody></table>\n";

  return o;
}

std::string environments_section(const Comparison& c, const Report& base, const Report& cand) {
  std::string o;
  o += "<h2>Environments</h2>\n";
  std::map<std::string, std::string> eb, ec;
  flatten(base.environment.raw, "", eb);
  flatten(cand.environment.raw, "", ec);
  std::set<std::string> keys;
  for (const auto& [k, v] : eb) keys.insert(k);
  for (const auto& [k, v] : ec) keys.insert(k);
  std::size_t differ = 0;
  std::string rows;
  for (const auto& k : keys) {
    const auto a = eb.find(k), b = ec.find(k);
    const std::string va = a == eb.end() ? "(absent)" : a->second, vb = b == ec.end() ? "(absent)" : b->second;
    const bool diff = va != vb;
    differ += diff;
    rows += fmt::format("<tr{}><th>{}</th><td class=\"name\">{}</td><td class=\"name\">{}</td></tr>\n",
                        diff ? " class=\"diff\"" : "", escape(k), escape(va), escape(vb));
  }
  o += fmt::format("<p>{} of {} entries differ (highlighted).</p>\n", differ, keys.size());
  o += fmt::format("<table class=\"env\"><thead><tr><th></th><th>baseline: {}</th><th>candidate: {}</th></tr></thead>"
                   "<tbody>\n{}</tbody></table>\n",
                   escape(c.base_label), escape(c.cand_label), rows);
  return o;
}

}  // namespace

std::string render_comparison_html(const Comparison& c, const Report& base, const Report& cand) {
  std::string o = html::page_head("harness compare: " + base.suite.name.value_or("?") +
                                  (cand.suite.name.value_or("?") != base.suite.name.value_or("?")
                                       ? " vs " + cand.suite.name.value_or("?")
                                       : ""));
  o += fmt::format("<p>Baseline: {}<br>Candidate: {}</p>\n", escape(c.base_label), escape(c.cand_label));
  const int code = comparison_exit_code(c);
  o += fmt::format("<p class=\"exit {}\">harness compare exits <b>{}</b>: {}</p>\n", code ? "fail" : "ok", code,
                   code ? "a regression (a result slower, or a check failing in the candidate; with --fail-on ambiguous, an "
                          "ambiguous pair)"
                        : "no regression");
  const auto& t = c.total;
  o += fmt::format("<p class=\"summary\">{} results: {} slower, {} faster, {} ambiguous, {} suspicious, {} same, {} failed, "
                   "{} new, {} missing, {} skipped; geometric mean candidate/baseline time {}x over {} compared</p>\n",
                   c.pairs.size(), t.slower, t.faster, t.ambiguous, t.suspicious, t.same, t.failed, t.new_, t.missing, t.skipped,
                   format_3sig(t.geomean_ratio), t.compared);
  o += fmt::format("<p>Baseline <code>{}</code>, candidate <code>{}</code>. A change counts when the median moves by "
                   "at least {}%, |Cliff's delta| is at least {} and the two-sided Mann-Whitney U test gives p &lt; {}."
                   "</p>\n",
                   escape(c.base_path), escape(c.cand_path), format_3sig(c.options.threshold * 100),
                   format_3sig(c.options.min_effect_size), format_3sig(c.options.alpha));
  for (const auto& w : c.warnings) o += fmt::format("<p class=\"note\">{}</p>\n", escape(w));

  o += problems_section(c);
  o += results_section(c);
  o += environments_section(c, base, cand);
  return o + html::page_tail("Rendered by harness compare --format html.");
}

}  // namespace harness
