// `harness report --format md`: one table per problem, the environment above.
#include <fmt/format.h>

#include "render/report_curves.hpp"
#include "render/report_fields.hpp"
#include "render/report_render.hpp"

namespace harness {

using namespace fields;

std::string md_escape(const std::string& s) {
  std::string out;
  for (char ch : s) {
    if (ch == '|') out += "\\|";
    else if (ch == '\n' || ch == '\r') out += ' ';
    else out += ch;
  }
  return out;
}

std::string render_report_markdown(const Report& report) {
  const std::vector<Result>& rows = report.results;
  std::string o;
  o += fmt::format("# harness report: {}\n\n", md_escape(report.suite.name.value_or("?")));
  if (!report.suite.description.value_or("").empty()) o += md_escape(*report.suite.description) + "\n\n";
  o += "| | |\n|---|---|\n";
  for (const auto& [k, v] : environment_lines(report))
    o += fmt::format("| {} | {} |\n", k, k == "Command" ? fmt::format("`{}`", md_escape(v)) : md_escape(v));
  o += fmt::format("\n**{}**\n", summary_line(rows));
  for (const auto& problem : problems_of(rows)) {
    const auto prow = rows_of(rows, problem);
    const ParamSplit split = split_params(prow);
    const auto& names = split.columns;
    o += fmt::format("\n## {}\n\n", md_escape(problem));
    if (!split.fixed.empty()) o += fmt::format("Fixed parameters: {}\n\n", md_escape(fixed_text(*prow.front(), split.fixed)));
    o += "| variant |";
    for (const auto& n : names) o += fmt::format(" {} |", md_escape(n));
    for (const char* h : kTableHead) o += fmt::format(" {} |", h);
    o += "\n|---|";
    for (const auto& n : names) {
      bool numeric = true;
      for (const Result* r : prow)
        if (r->params.has(n) && !pv(*r, n).is_number()) numeric = false;
      o += numeric ? "---:|" : "---|";
    }
    o += "---|---:|---:|---:|---:|---:|---|\n";
    for (const Result* r : prow) {
      const Cells c = cells_of(*r);
      o += fmt::format("| {} |", md_escape(r->variant));
      for (const auto& n : names)
        o += fmt::format(" {} |", r->params.has(n) ? md_escape(param_text(pv(*r, n))) : "");
      o += fmt::format(" {} | {} | {} | {} | {} | {} | {} |\n", c.status, c.median, c.noise, c.gflops, c.gbps, c.memory,
                       md_escape(c.note));
    }
    o += curve_tables_markdown(prow);
  }
  return o;
}

}  // namespace harness
