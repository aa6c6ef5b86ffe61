#pragma once
// `harness report`: a harness report rendered for people. Markdown and CSV tables, and
// one self-contained HTML file (no scripts, no network) with SVG charts: throughput
// against size per problem, a roofline, and extra device memory against size.
#include <string>

#include "report/report_model.hpp"

namespace harness {

struct ReportOptions {
  // The variant speeds are shown relative to: "" = each problem's vendor variant
  // (cublas, cub, cudnn, cusparse) where it has one, "none" = no speedup section. md and
  // csv add a ratio column only when a variant is named; a name no result has is an
  // InputError (render_report).
  std::string reference;
};

std::string render_report_markdown(const Report& report);
std::string render_report_markdown(const Report& report, const ReportOptions& options);
std::string render_report_csv(const Report& report);
std::string render_report_csv(const Report& report, const ReportOptions& options);
std::string render_report_html(const Report& report);
std::string render_report_html(const Report& report, const ReportOptions& options);

// format: md, csv or html. Throws InputError for anything else or for a report that is
// not a harness report (Google Benchmark JSON has no results to render).
std::string render_report(const Report& report, const std::string& format);
std::string render_report(const Report& report, const std::string& format, const ReportOptions& options);

// A markdown table cell: '|' escaped, line breaks as spaces.
std::string md_escape(const std::string& s);

}  // namespace harness
