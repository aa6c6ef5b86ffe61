#pragma once
// `harness report`: a harness report rendered for people. Markdown and CSV tables, and
// one self-contained HTML file (no scripts, no network) with SVG charts: throughput
// against size per problem, a roofline, and extra device memory against size.
#include <string>

#include <nlohmann/json.hpp>

namespace harness {

std::string render_report_markdown(const nlohmann::json& report);
std::string render_report_csv(const nlohmann::json& report);
std::string render_report_html(const nlohmann::json& report);

// format: md, csv or html. Throws InputError for anything else or for a report that is
// not a harness report (Google Benchmark JSON has no results to render).
std::string render_report(const nlohmann::json& report, const std::string& format);

}  // namespace harness
