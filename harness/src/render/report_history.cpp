#include "render/report_history.hpp"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "harness/error.hpp"
#include "render/report_curves.hpp"
#include "render/report_html.hpp"
#include "render/report_svg.hpp"
#include "core/units.hpp"

namespace harness {

namespace {

using svg::escape;

std::string run_label(const Report& r, std::size_t i) {
  std::string date = r.environment.date.value_or("");
  if (date.size() > 16) date = date.substr(0, 16);
  std::replace(date.begin(), date.end(), 'T', ' ');
  std::string commit = r.environment.git_commit.value_or("");
  if (commit.size() > 10) commit = commit.substr(0, 10);
  std::string s = date;
  if (!commit.empty()) s += (s.empty() ? "" : " ") + commit;
  return s.empty() ? fmt::format("run {}", i + 1) : s;
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string o = "\"";
  for (char c : s) o += c == '"' ? std::string("\"\"") : std::string(1, c);
  return o + "\"";
}

std::string opt_num(const std::optional<double>& v) { return v ? fmt::format("{}", *v) : ""; }

}  // namespace

std::vector<HistoryRow> history_rows(const std::vector<Report>& runs, const CompareOptions& options) {
  if (runs.size() < 2) throw InputError("a history needs at least two reports");
  // Verdicts of each step: run i against the last earlier run that has the result.
  std::vector<std::map<std::string, std::string>> verdicts(runs.size());
  std::map<std::string, std::size_t> last_seen;  // result -> run index
  for (std::size_t i = 0; i < runs.size(); ++i) {
    std::map<std::size_t, bool> against;
    for (const auto& r : runs[i].results)
      if (auto it = last_seen.find(r.name); it != last_seen.end()) against[it->second] = true;
    for (const auto& [j, on] : against) {
      const Comparison c = compare(runs[j], runs[i], options);
      for (const auto& p : c.pairs) {
        if (last_seen.count(p.name) && last_seen[p.name] == j && p.verdict != Verdict::missing)
          verdicts[i][p.name] = std::string(to_string(p.verdict));
      }
    }
    for (const auto& r : runs[i].results) last_seen[r.name] = i;
  }
  std::vector<HistoryRow> out;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const Report& rep = runs[i];
    for (const auto& r : rep.results) {
      HistoryRow h;
      h.run = i;
      h.label = run_label(rep, i);
      h.date = rep.environment.date.value_or("");
      h.commit = rep.environment.git_commit.value_or("");
      h.result = r.name;
      h.problem = r.problem;
      h.case_name = r.case_name;
      h.variant = r.variant;
      h.shape = html::params_text(r);
      h.status = std::string(to_string(r.status));
      if (r.status == Status::passed && r.timing && r.timing->stats.median > 0) {
        h.median = r.timing->stats.median;
        h.q1 = r.timing->stats.q1 > 0 ? r.timing->stats.q1 : r.timing->stats.median;
        h.q3 = r.timing->stats.q3 > 0 ? r.timing->stats.q3 : r.timing->stats.median;
      }
      if (auto it = verdicts[i].find(r.name); it != verdicts[i].end()) h.verdict = it->second;
      out.push_back(std::move(h));
    }
  }
  return out;
}

std::string render_history_csv(const std::vector<Report>& runs) {
  std::string o = "run,label,date,commit,result,problem,variant,status,median_s,q1_s,q3_s,verdict_vs_previous\n";
  for (const auto& h : history_rows(runs))
    o += fmt::format("{},{},{},{},{},{},{},{},{},{},{},{}\n", h.run + 1, csv_field(h.label), csv_field(h.date),
                     csv_field(h.commit), csv_field(h.result), csv_field(h.problem), csv_field(h.variant), h.status,
                     opt_num(h.median), opt_num(h.q1), opt_num(h.q3), h.verdict);
  return o;
}

namespace {

// The steps harness compare calls a regression (slower or failing), with the median before.
std::string flagged_table(const std::vector<HistoryRow>& rows) {
  std::vector<const HistoryRow*> flagged;
  for (const auto& h : rows)
    if (h.verdict == "slower" || h.verdict == "failed") flagged.push_back(&h);
  std::string o = fmt::format("<p class=\"summary\">{} step(s) that harness compare calls a regression (slower or failing), "
                              "ringed in red below</p>\n",
                              flagged.size());
  if (flagged.empty()) return o;
  o += "<table><thead><tr><th>run</th><th>result</th><th>verdict</th><th>median</th><th>previous median</th>"
       "</tr></thead><tbody>\n";
  for (const HistoryRow* h : flagged) {
    std::optional<double> prev;
    for (const auto& x : rows)
      if (x.result == h->result && x.run < h->run && x.median) prev = x.median;
    o += fmt::format("<tr class=\"slower\"><td>{}</td><td class=\"name\">{}</td><td class=\"verdict\">{}</td>"
                     "<td class=\"num\">{}</td><td class=\"num\">{}</td></tr>\n",
                     escape(h->label), escape(h->result), escape(h->verdict),
                     h->median ? format_seconds(*h->median) : "-", prev ? format_seconds(*prev) : "-");
  }
  return o + "</tbody></table>\n";
}

// One case's chart: every result's median relative to its first timed run, with its
// quartiles as a band; one series per result, colored by variant.
svg::Chart case_chart(const std::vector<Report>& runs, const std::vector<HistoryRow>& rows, const std::string& problem,
                      const std::string& cname, std::size_t index, svg::ColorMap& colors) {
  svg::Chart c;
  c.id = fmt::format("history-{}", index);
  c.title = fmt::format("{}{}: median time relative to the first run", problem, cname.empty() ? "" : " / " + cname);
  c.subtitle = "band: quartiles of the samples; red ring: a step harness compare calls slower or failed";
  c.x.label = "run (date, commit)";
  c.y.label = "median time / first run's median";
  for (std::size_t i = 0; i < runs.size(); ++i) c.x.categories.emplace_back(static_cast<double>(i + 1), run_label(runs[i], i));
  std::map<std::string, double> first;
  for (const auto& h : rows) {
    if (h.problem != problem || h.case_name != cname || !h.median) continue;
    const double base = first.emplace(h.result, *h.median).first->second;
    const std::string label = h.variant + (h.shape.empty() ? "" : " " + h.shape);
    auto it = std::find_if(c.series.begin(), c.series.end(), [&](const svg::Series& s) { return s.label == label; });
    if (it == c.series.end()) {
      c.series.push_back({label, {}, true, colors(h.variant)});
      it = c.series.end() - 1;
    }
    svg::Point p;
    p.x = static_cast<double>(h.run + 1);
    p.y = *h.median / base;
    p.lo = *h.q1 / base;
    p.hi = *h.q3 / base;
    p.flagged = h.verdict == "slower" || h.verdict == "failed";
    p.tip = fmt::format("{} in {}: median {} (quartiles {} to {}){}", h.result, h.label, format_seconds(*h.median),
                        format_seconds(*h.q1), format_seconds(*h.q3),
                        h.verdict.empty() ? "" : "; vs previous: " + h.verdict);
    it->points.push_back(p);
  }
  c.height = 360;
  return c;
}

}  // namespace

std::string render_history_html(const std::vector<Report>& runs) {
  const auto rows = history_rows(runs);
  const std::string suite = runs.front().suite.name.value_or("?");
  std::string o = html::page_head(fmt::format("harness history: {} over {} runs", suite, runs.size()));
  o += "<table class=\"env\"><thead><tr><th>run</th><th>date</th><th>commit</th><th>GPU</th><th>file</th></tr></thead><tbody>\n";
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const auto& env = runs[i].environment;
    o += fmt::format("<tr><td class=\"num\">{}</td><td>{}</td><td><code>{}</code></td><td>{}</td><td><code>{}</code></td></tr>\n",
                     i + 1, escape(env.date.value_or("?")), escape(env.git_commit.value_or("?")),
                     escape(env.gpu && env.gpu->name ? *env.gpu->name : "none"), escape(runs[i].path));
  }
  o += "</tbody></table>\n";
  o += flagged_table(rows);
  svg::ColorMap colors;
  std::vector<std::pair<std::string, std::string>> cases;
  for (const auto& h : rows)
    if (std::find(cases.begin(), cases.end(), std::make_pair(h.problem, h.case_name)) == cases.end())
      cases.emplace_back(h.problem, h.case_name);
  std::size_t index = 0;
  for (const auto& [problem, cname] : cases) {
    const svg::Chart c = case_chart(runs, rows, problem, cname, index++, colors);
    if (!c.series.empty()) o += svg::render(c);
  }
  // Curves per step (loss curves) of every run: one line per variant, and per run where
  // a variant is in several runs.
  std::vector<const Result*> all;
  std::vector<std::string> sources;
  for (std::size_t i = 0; i < runs.size(); ++i)
    for (const auto& r : runs[i].results) {
      all.push_back(&r);
      sources.push_back(fmt::format("run {}", i + 1));  // the table above says which run is which
    }
  o += curve_section_html(all, colors, sources);
  return o + html::page_tail("Rendered by harness report with several reports (history); verdicts as harness compare "
                             "with its default thresholds.");
}

}  // namespace harness
