// `harness compare` as text, markdown and JSON (the HTML page: render/compare_html.cpp).
#include "render/compare_text.hpp"

#include <fmt/format.h>

#include "core/units.hpp"
#include "harness/error.hpp"

namespace harness {

namespace {

std::string fmt_time(const std::optional<double>& s) { return s ? format_seconds_short(*s) : "-"; }

std::string fmt_effect(const std::optional<double>& d) { return d ? fmt::format("{:+.2f}", *d) : "-"; }

std::string rule_text(const CompareOptions& o) {
  std::string s = fmt::format("a change counts when the median time moves by at least {:g}%", o.threshold * 100);
  if (o.min_effect_size > 0)
    s += fmt::format(", the samples are separated (|Cliff's delta| >= {:g})", o.min_effect_size);
  return s + fmt::format(" and a two-sided Mann-Whitney U test gives p < {:g}; ambiguous where the runs' interquartile "
                         "ranges overlap or SM clocks (> {:g}% apart) cannot decide it", o.alpha, o.max_clock_change * 100);
}

std::string verdict_text(const Pair& p, bool shout) {
  std::string v(to_string(p.verdict));
  if (shout && p.regression) std::transform(v.begin(), v.end(), v.begin(), [](unsigned char ch) { return std::toupper(ch); });
  return v;
}

std::string ratio_text(const ProblemSummary& s) {
  if (!s.compared) return "-";
  return fmt::format("{:.3f}x ({})", s.geomean_ratio, format_change(s.geomean_ratio - 1));
}

std::string counts_text(const ProblemSummary& s) {
  std::vector<std::string> parts;
  auto add = [&](std::size_t n, const char* what) {
    if (n) parts.push_back(fmt::format("{} {}", n, what));
  };
  add(s.slower, "slower");
  add(s.failed, "failed");
  add(s.faster, "faster");
  add(s.ambiguous, "ambiguous");
  add(s.suspicious, "suspicious");
  add(s.same, "same");
  add(s.new_, "new");
  add(s.missing, "missing");
  add(s.skipped, "skipped");
  return parts.empty() ? "nothing to compare" : fmt::format("{}", fmt::join(parts, ", "));
}

std::string verdict_line(const Comparison& c) {
  if (!c.regression) return fmt::format("no regression ({})", counts_text(c.total));
  std::vector<std::string> why;
  if (c.total.slower) why.push_back(fmt::format("{} slower", c.total.slower));
  if (c.total.failed) why.push_back(fmt::format("{} failed", c.total.failed));
  if (c.options.fail_on_missing && c.total.missing) why.push_back(fmt::format("{} missing", c.total.missing));
  if (c.options.fail_on_ambiguous && c.total.ambiguous) why.push_back(fmt::format("{} ambiguous", c.total.ambiguous));
  return fmt::format("REGRESSION: {}", fmt::join(why, ", "));
}

std::string md_cell(std::string s) {
  std::string out;
  for (char ch : s) {
    if (ch == '|') out += "\\|";
    else if (ch == '\n') out += ' ';
    else out += ch;
  }
  return out;
}

std::string render_text(const Comparison& c) {
  std::string out;
  out += fmt::format("baseline:  {} ({})\n", c.base_path, c.base_label);
  out += fmt::format("candidate: {} ({})\n", c.cand_path, c.cand_label);
  out += fmt::format("rule: {}\n", rule_text(c.options));
  for (const auto& w : c.warnings) out += fmt::format("warning: {}\n", w);
  out += "\n";
  std::size_t wname = 9, hidden = 0;
  for (const auto& p : c.pairs) wname = std::max(wname, p.display.size());
  out += fmt::format("{:<{}}  {:>10}  {:>10}  {:>8}  {:>8}  {:>6}  {}\n", "benchmark", wname, "baseline",
                     "candidate", "change", "p", "effect", "verdict");
  for (const auto& p : c.pairs) {
    if (p.verdict == Verdict::skipped) {
      ++hidden;
      continue;
    }
    out += fmt::format("{:<{}}  {:>10}  {:>10}  {:>8}  {:>8}  {:>6}  {}", p.display, wname, fmt_time(p.base_median),
                       fmt_time(p.cand_median), p.change ? format_change(*p.change) : "-",
                       p.p_value ? format_p_value(*p.p_value) : "-", fmt_effect(p.effect_size), verdict_text(p, true));
    if (!p.note.empty()) out += "  (" + p.note + ")";
    out += "\n";
  }
  if (hidden)
    out += fmt::format("({} benchmark{} not timed in either report not listed; --format md or json lists them)\n",
                       hidden, hidden == 1 ? "" : "s");
  out += "\nper problem (geometric mean of candidate/baseline median time over the pairs timed in both):\n";
  std::size_t wprob = 3;
  for (const auto& s : c.problems) wprob = std::max(wprob, s.problem.size());
  for (const auto& s : c.problems) {
    out += fmt::format("  {:<{}}  {:>18}  {}", s.problem, wprob, ratio_text(s), counts_text(s));
    out += s.fixed_params.empty() ? "\n" : fmt::format("  [{}]\n", s.fixed_params);
  }
  if (c.problems.size() > 1)
    out += fmt::format("  {:<{}}  {:>18}  {}\n", "all", wprob, ratio_text(c.total), counts_text(c.total));
  out += fmt::format("\nresult: {}\n", verdict_line(c));
  return out;
}

std::string render_md(const Comparison& c) {
  std::string out = "## harness compare\n\n";
  out += fmt::format("- baseline: `{}` ({})\n", c.base_path, md_cell(c.base_label));
  out += fmt::format("- candidate: `{}` ({})\n", c.cand_path, md_cell(c.cand_label));
  out += fmt::format("- rule: {}\n\n", rule_text(c.options));
  for (const auto& w : c.warnings) out += fmt::format("> **Warning:** {}\n>\n", md_cell(w));
  if (!c.warnings.empty()) out += "\n";
  out += "| benchmark | baseline | candidate | change | p | effect | verdict | note |\n";
  out += "|---|---:|---:|---:|---:|---:|---|---|\n";
  for (const auto& p : c.pairs) {
    const std::string v = p.regression ? "**" + verdict_text(p, false) + "**" : verdict_text(p, false);
    out += fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} |\n", md_cell(p.display), fmt_time(p.base_median),
                       fmt_time(p.cand_median), p.change ? format_change(*p.change) : "-",
                       p.p_value ? format_p_value(*p.p_value) : "-", fmt_effect(p.effect_size), v, md_cell(p.note));
  }
  out += "\n### Per problem\n\nGeometric mean of candidate/baseline median time over the pairs timed in both "
         "(below 1: faster).\n\n";
  out += "| problem | pairs | time ratio | faster | slower | ambiguous | same | new | missing | failed | skipped | parameters |\n";
  out += "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n";
  auto row = [&](const ProblemSummary& s) {
    out += fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |\n", md_cell(s.problem), s.compared,
                       ratio_text(s), s.faster, s.slower, s.ambiguous, s.same, s.new_, s.missing, s.failed, s.skipped,
                       md_cell(s.fixed_params));
  };
  for (const auto& s : c.problems) row(s);
  if (c.problems.size() > 1) row(c.total);
  out += fmt::format("\n**Result: {}**\n", verdict_line(c));
  return out;
}

nlohmann::json summary_json(const ProblemSummary& s) {
  nlohmann::json j = {{"problem", s.problem},
                      {"fixed_params", s.fixed_params},
                      {"compared", s.compared},
                      {"faster", s.faster},
                      {"slower", s.slower},
                      {"same", s.same},
                      {"new", s.new_},
                      {"missing", s.missing},
                      {"failed", s.failed},
                      {"skipped", s.skipped},
                      {"ambiguous", s.ambiguous},
                      {"suspicious", s.suspicious}};
  j["geomean_time_ratio"] = s.compared ? nlohmann::json(s.geomean_ratio) : nlohmann::json(nullptr);
  return j;
}

}  // namespace

nlohmann::json comparison_to_json(const Comparison& c) {
  auto opt = [](const std::optional<double>& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); };
  nlohmann::json pairs = nlohmann::json::array();
  for (const auto& p : c.pairs)
    pairs.push_back({{"name", p.name},
                     {"display", p.display},
                     {"problem", p.problem},
                     {"variant", p.variant},
                     {"params", p.params},
                     {"verdict", std::string(to_string(p.verdict))},
                     {"regression", p.regression},
                     {"baseline", {{"median_s", opt(p.base_median)}, {"samples", p.base_n}}},
                     {"candidate", {{"median_s", opt(p.cand_median)}, {"samples", p.cand_n}}},
                     {"change", opt(p.change)},
                     {"p_value", opt(p.p_value)},
                     {"effect_size", opt(p.effect_size)},
                     {"exact_test", p.exact_test},
                     {"note", p.note}});
  nlohmann::json problems = nlohmann::json::array();
  for (const auto& s : c.problems) problems.push_back(summary_json(s));
  return {{"schema", "harness-compare"},
          {"schema_version", 1},
          {"baseline", {{"path", c.base_path}, {"label", c.base_label}}},
          {"candidate", {{"path", c.cand_path}, {"label", c.cand_label}}},
          {"threshold", c.options.threshold},
          {"alpha", c.options.alpha},
          {"min_effect_size", c.options.min_effect_size},
          {"spread_k", c.options.spread_k},
          {"max_clock_change", c.options.max_clock_change},
          {"fail_on_ambiguous", c.options.fail_on_ambiguous},
          {"rule", rule_text(c.options)},
          {"test", "mann-whitney-u, two-sided"},
          {"warnings", c.warnings},
          {"pairs", pairs},
          {"problems", problems},
          {"total", summary_json(c.total)},
          {"regression", c.regression},
          {"result", verdict_line(c)}};
}

std::string render_comparison(const Comparison& c, const std::string& format) {
  if (format == "md") return render_md(c);
  if (format == "json") return comparison_to_json(c).dump(2) + "\n";
  return render_text(c);
}

}  // namespace harness
