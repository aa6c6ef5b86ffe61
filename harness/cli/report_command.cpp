// harness report RESULTS.json [--format md|csv|html] [--out FILE]
#include <cstdio>

#include <fmt/format.h>

#include "commands.hpp"
#include "harness/error.hpp"
#include "report/report.hpp"
#include "report/report_model.hpp"
#include "report/report_render.hpp"

namespace harness::cli {

namespace {
struct ReportArgs {
  std::string input;
  std::string format;
  std::string out;
};

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}
}  // namespace

void add_report_command(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<ReportArgs>();
  auto* cmd = app.add_subcommand("report", "Render a report as markdown, CSV, or one self-contained HTML file with charts");
  cmd->add_option("report", args->input, "A report written by `harness run`")->required();
  cmd->add_option("--format", args->format, "md, csv or html (default: from --out's extension, else md)")
      ->check(CLI::IsMember({"md", "csv", "html"}));
  cmd->add_option("--out", args->out, "Write here (atomically) instead of to standard output");
  cmd->footer(
      "HTML: tables plus SVG charts (no scripts, nothing fetched): per problem GFLOP/s (GB/s, or time)\n"
      "against a size parameter per variant; a roofline against the device peaks in the report (else the\n"
      "best measured results); extra device memory against size, out-of-memory skips marked.\n"
      "\n"
      "Exit codes: 0 written; 2 bad input (unreadable report, Google Benchmark JSON, bad option).");
  cmd->callback([args, &exit_code] {
    std::string format = args->format;
    if (format.empty()) {
      if (ends_with(args->out, ".html") || ends_with(args->out, ".htm")) format = "html";
      else if (ends_with(args->out, ".csv")) format = "csv";
      else format = "md";
    }
    const nlohmann::json json = read_report(args->input);
    if (json.value("schema", "") != kReportSchema)
      throw InputError(fmt::format("{}: Google Benchmark JSON, not a harness report: nothing to render "
                                   "(`harness compare` reads it)",
                                   args->input));
    const Report report = decode_report(json, args->input);
    const std::string text = render_report(report, format);
    if (args->out.empty() || args->out == "-") {
      std::fwrite(text.data(), 1, text.size(), stdout);
      std::fflush(stdout);
    } else {
      write_file_atomically(args->out, text);
      std::fprintf(stderr, "%s report: %s\n", format.c_str(), args->out.c_str());
    }
    exit_code = kExitOk;
  });
}

}  // namespace harness::cli
