// `harness report --format md`: one table per problem, the environment above.
#include <fmt/format.h>

#include "render/report_curves.hpp"
#include "render/report_fields.hpp"
#include "render/report_render.hpp"
#include "render/report_speedup.hpp"
#include "render/report_training.hpp"
#include "core/units.hpp"

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

std::string render_report_markdown(const Report& report) { return render_report_markdown(report, ReportOptions{}); }

std::string render_report_markdown(const Report& report, const ReportOptions& options) {
  // A named --reference adds a column: each result's speed as a share of the reference's at
  // the same shape (the html speedup section's ratio); "" and "none" add nothing.
  const bool with_reference = !options.reference.empty() && options.reference != "none";
  const std::vector<Result>& rows = report.results;
  std::string o;
  o += fmt::format("# harness report: {}\n\n", md_escape(report.suite.name.value_or("?")));
  if (!report.suite.description.value_or("").empty()) o += md_escape(*report.suite.description) + "\n\n";
  o += "| | |\n|---|---|\n";
  for (const auto& [k, v] : environment_lines(report))
    o += fmt::format("| {} | {} |\n", k, k == "Command" ? fmt::format("`{}`", md_escape(v)) : md_escape(v));
  o += fmt::format("\n**{}**\n", summary_line(rows));
  if (with_reference)
    o += "\nspeed vs the reference: its median time / the variant's, with a 95% confidence interval in brackets "
         "where both results have at least 5 samples (percentile bootstrap, 2000 resamples of each result's samples, "
         "fixed seed).\n";
  for (const auto& problem : problems_of(rows)) {
    const auto prow = rows_of(rows, problem);
    const ParamSplit split = split_params(prow);
    const auto& names = split.columns;
    const std::string ref = with_reference ? reference_for(prow, options.reference) : std::string();
    o += fmt::format("\n## {}\n\n", md_escape(problem));
    if (!split.fixed.empty()) o += fmt::format("Fixed parameters: {}\n\n", md_escape(fixed_text(*prow.front(), split.fixed)));
    o += "| variant |";
    for (const auto& n : names) o += fmt::format(" {} |", md_escape(n));
    for (const char* h : kTableHead) o += fmt::format(" {} |", h);
    const bool sensors = any_sensors(prow);
    if (sensors)
      for (const char* h : kSensorHead) o += fmt::format(" {} |", h);
    if (!ref.empty()) o += fmt::format(" speed vs {} |", md_escape(ref));
    o += "\n|---|";
    for (const auto& n : names) {
      bool numeric = true;
      for (const Result* r : prow)
        if (r->params.has(n) && !pv(*r, n).is_number()) numeric = false;
      o += numeric ? "---:|" : "---|";
    }
    o += "---|---:|---:|---:|---:|---:|---:|---|";
    if (sensors) o += "---:|---:|---:|---:|";
    o += ref.empty() ? "\n" : "---:|\n";
    for (const Result* r : prow) {
      const Cells c = cells_of(*r, report.environment.peaks);
      o += fmt::format("| {} |", md_escape(r->variant));
      for (const auto& n : names)
        o += fmt::format(" {} |", r->params.has(n) ? md_escape(param_text(pv(*r, n))) : "");
      o += fmt::format(" {} | {} | {} | {} | {} | {} | {} | {} |", c.status, c.median, c.noise, c.gflops, c.gbps,
                       c.peak, c.memory, md_escape(c.note));
      if (sensors) {
        const SensorCells sc = sensor_cells_of(*r);
        o += fmt::format(" {} | {} | {} | {} |", sc.clock, sc.power, sc.energy, sc.flop_per_j);
      }
      if (!ref.empty()) {
        const auto ratio = reference_ratio(*r, prow, ref);
        o += ratio ? fmt::format(" {} |", reference_ratio_text(*ratio)) : " |";
      }
      o += "\n";
    }
    o += training_table_markdown(prow);
    o += curve_tables_markdown(prow);
  }
  return o;
}

}  // namespace harness
