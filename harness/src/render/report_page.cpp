// `harness report --format html`: one self-contained page (no scripts, no network) with
// the environment, the speed-up section, the charts, the result tables and the kernel
// timelines; and render_report, which picks the format.
#include <fmt/format.h>

#include "harness/error.hpp"
#include "render/report_charts.hpp"
#include "render/report_curves.hpp"
#include "render/report_fields.hpp"
#include "render/report_html.hpp"
#include "render/report_render.hpp"
#include "render/report_speedup.hpp"
#include "render/report_svg.hpp"
#include "render/report_timeline.hpp"
#include "render/report_training.hpp"
#include "types/environment.hpp"

namespace harness {

using namespace fields;
using svg::escape;

namespace {

std::string html_table(const std::vector<const Result*>& prow, const std::optional<ReportPeaks>& peaks) {
  const ParamSplit split = split_params(prow);
  const auto& names = split.columns;
  std::string o;
  if (!split.fixed.empty())
    o += fmt::format("<p>Fixed parameters: {}</p>\n", escape(fixed_text(*prow.front(), split.fixed)));
  o += "<table class=\"results\">\n<thead><tr><th>variant</th>";
  for (const auto& n : names) o += fmt::format("<th>{}</th>", escape(n));
  for (const char* h : kTableHead) o += fmt::format("<th>{}</th>", h);
  const bool sensors = any_sensors(prow);
  if (sensors)
    for (const char* h : kSensorHead) o += fmt::format("<th>{}</th>", h);
  o += "</tr></thead>\n<tbody>\n";
  for (const Result* r : prow) {
    const Cells c = cells_of(*r, peaks);
    o += fmt::format("<tr class=\"{}\"><td>{}</td>", escape(status_text(*r)), escape(r->variant));
    for (const auto& n : names)
      o += fmt::format("<td class=\"num\">{}</td>", r->params.has(n) ? escape(param_text(pv(*r, n))) : "");
    o += fmt::format(
        "<td class=\"status\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>"
        "<td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"note\">{}</td>",
        escape(c.status), escape(c.median), escape(c.noise), escape(c.gflops), escape(c.gbps), escape(c.peak),
        escape(c.memory), escape(c.note));
    if (sensors) {
      const SensorCells sc = sensor_cells_of(*r);
      for (const std::string* v : {&sc.clock, &sc.power, &sc.energy, &sc.flop_per_j})
        o += fmt::format("<td class=\"num\">{}</td>", escape(*v));
    }
    o += "</tr>\n";
  }
  return o + "</tbody>\n</table>\n";
}

}  // namespace

std::string render_report_html(const Report& report) { return render_report_html(report, ReportOptions{}); }

std::string render_report_html(const Report& report, const ReportOptions& options) {
  const std::vector<Result>& rows = report.results;
  svg::ColorMap colors;  // one color per variant on every chart of the page
  const std::string suite = report.suite.name.value_or("?");
  std::string o;
  o += "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  // Nothing may be fetched: the file is the whole report.
  o += "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">\n";
  o += fmt::format("<title>harness report: {}</title>\n<style>{}</style>\n</head>\n<body>\n", escape(suite), html::stylesheet());
  o += fmt::format("<h1>harness report: {}</h1>\n", escape(suite));
  if (!report.suite.description.value_or("").empty())
    o += fmt::format("<p>{}</p>\n", escape(*report.suite.description));
  o += "<table class=\"env\">\n";
  for (const auto& [k, v] : environment_lines(report))
    o += fmt::format("<tr><th>{}</th><td>{}</td></tr>\n", escape(k), escape(v));
  o += "</table>\n";
  o += fmt::format("<p class=\"summary\">{}</p>\n", escape(summary_line(rows)));
  // Variants get their colors in report order, whichever chart comes first.
  for (const auto& r : rows) (void)colors(r.variant);
  // Per-step series (loss curves); no section when no result has one.
  const std::string curves = curve_section_html(rows, colors);
  // ms/step, tokens/s, MFU and the phases of training results; no section without one.
  std::string training;
  for (const auto& problem : problems_of(rows))
    if (const std::string t = training_table_html(rows_of(rows, problem)); !t.empty())
      training += fmt::format("<h3>{}</h3>\n{}", escape(problem), t);
  if (!training.empty())
    training = "<h2 id=\"training\">Training step: ms/step, tokens/s, MFU, phases</h2>\n" + training;
  o += fmt::format("<nav><a href=\"#speedup\">Speedup</a><a href=\"#throughput\">Throughput</a>{}{}"
                   "<a href=\"#roofline-section\">Roofline</a><a href=\"#memory\">Memory</a><a href=\"#results\">Results</a>"
                   "<a href=\"#timelines\">Kernel timelines</a></nav>\n",
                   training.empty() ? "" : "<a href=\"#training\">Training step</a>",
                   curves.empty() ? "" : "<a href=\"#curves\">Curves</a>");

  o += "<h2 id=\"speedup\">Speed relative to the reference</h2>\n";
  o += speedup_section_html(report, options.reference, colors);

  o += "<h2 id=\"throughput\">Throughput</h2>\n";
  std::size_t index = 0;
  for (const auto& problem : problems_of(rows)) o += throughput_chart(problem, rows_of(rows, problem), index++, colors);
  if (rows.empty()) o += "<p class=\"nochart\">The report has no results.</p>\n";

  o += training;
  o += curves;

  o += "<h2 id=\"roofline-section\">Roofline</h2>\n";
  std::string note;
  o += roofline_chart(report, rows, note, colors);
  if (!note.empty()) o += fmt::format("<p class=\"note\">{}</p>\n", escape(note));

  o += "<h2 id=\"memory\">Memory</h2>\n";
  o += memory_charts(rows, colors);

  o += "<h2 id=\"results\">Results</h2>\n";
  for (const auto& problem : problems_of(rows)) {
    o += fmt::format("<h3>{}</h3>\n", escape(problem));
    o += html_table(rows_of(rows, problem), report.environment.peaks);
  }
  o += "<h2 id=\"timelines\">Kernel timelines</h2>\n";
  o += kernel_timelines_html(report);
  o += fmt::format("<footer>Rendered by harness {} from a report written by harness {} (schema {} version {}); "
                   "hover over a point for its details.</footer>\n",
                   escape(harness_version()), escape(report.environment.harness_version.value_or("?")),
                   escape(report.format), report.schema_version);
  o += "</body>\n</html>\n";
  return o;
}

std::string render_report(const Report& report, const std::string& format) {
  return render_report(report, format, ReportOptions{});
}

std::string render_report(const Report& report, const std::string& format, const ReportOptions& options) {
  if (!report.is_harness_report())
    throw InputError("not a harness report (Google Benchmark JSON has no results to render)");
  check_reference(report, options.reference);
  if (format == "md") return render_report_markdown(report, options);
  if (format == "csv") return render_report_csv(report, options);
  if (format == "html") return render_report_html(report, options);
  throw InputError(fmt::format("unknown report format '{}' (md, csv or html)", format));
}

}  // namespace harness
