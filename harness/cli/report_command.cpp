// harness report RESULTS.json [--format md|csv|html] [--reference VARIANT] [--out FILE]
// harness report RUN1.json RUN2.json ... [--format html|csv]    (history over runs)
// harness report A.json B.json ... --merge [--format md|csv|html] (several reports as one)
// harness report TRACE.json --format trace-html                 (a `run --trace` timeline)
#include <cstdio>

#include <fmt/format.h>

#include "commands.hpp"
#include "harness/error.hpp"
#include "report/read_text.hpp"
#include "report/report.hpp"
#include "report/report_model.hpp"
#include "render/report_history.hpp"
#include "render/report_render.hpp"
#include "render/report_timeline.hpp"

namespace harness::cli {

namespace {
struct ReportArgs {
  std::vector<std::string> inputs;
  std::string format;
  std::string out;
  std::string reference;
  bool merge = false;
};

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}
}  // namespace

void add_report_command(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<ReportArgs>();
  auto* cmd = app.add_subcommand("report", "Render a report as markdown, CSV, or one self-contained HTML file with charts");
  cmd->add_option("reports", args->inputs,
                  "A report written by `harness run`; several reports of one suite: its history;\n"
                  "with --format trace-html: a `harness run --trace` file")
      ->required();
  cmd->add_option("--format", args->format,
                  "md, csv, html or trace-html (default: from --out's extension, else md; html for a history)")
      ->check(CLI::IsMember({"md", "csv", "html", "trace-html"}));
  cmd->add_option("--reference", args->reference,
                  "HTML: show each variant's speed as a share of this variant's at the same shape, with the\n"
                  "geometric mean per variant (default: the problem's vendor variant, cublas/cub/cudnn/cusparse;\n"
                  "none: no speedup section). md: a 'speed vs VARIANT' column; csv: columns reference and\n"
                  "speedup_vs_reference (only when a variant is named). A variant no result has is an error");
  cmd->add_flag("--merge", args->merge,
               "Several reports rendered as one (their results side by side, e.g. `harness run`'s and\n"
               "reports/pytorch_transformer.py's of the same configurations) instead of as a history");
  cmd->add_option("--out", args->out, "Write here (atomically) instead of to standard output");
  cmd->footer(
      "HTML: tables plus SVG charts (no scripts, nothing fetched): speed relative to a reference variant per\n"
      "case and its geometric mean; per problem GFLOP/s (GB/s, or time) against a size parameter per variant;\n"
      "a roofline against the device peaks in the report (else the best measured results); extra device\n"
      "memory against the parameter that drives it; the kernels of one profiled run per result, to scale.\n"
      "Several reports: the history of every result's median (quartile band) over the runs, x = date and\n"
      "commit, regression steps as harness compare judges them flagged; csv: the same as a long table;\n"
      "with --merge: one report of all their results (md, csv or html), paired by the parameters both sides\n"
      "have (one-sided ones at one value are left out: \"Not paired on\"), variants of one name told apart by\n"
      "what differs (\"pytorch_bf16_compile compile_mode=reduce-overhead\"); results with a training step\n"
      "(extra.phase_ms, tokens_per_s) get a table of ms/step, tokens/s, MFU and forward/backward/optimizer.\n"
      "trace-html: the timeline of `harness run --trace FILE.json` drawn as a page.\n"
      "Curves: a result whose extra holds NAME_curve (an array of numbers, one every NAME_curve_stride\n"
      "steps; train_transformer and reports/pytorch_transformer.py write loss_curve) gets, per configuration\n"
      "(its parameters without the variant), a line chart against step with one line per variant (HTML, also\n"
      "on a history page), and in markdown and HTML a table per configuration: the value at step 0 and at\n"
      "25/50/75% of the longest curve's steps, the last value and its step, the mean of the last 10% of the\n"
      "recorded values.\n"
      "\n"
      "Exit codes: 0 written; 2 bad input (unreadable report, Google Benchmark JSON, bad option).");
  cmd->callback([args, &exit_code] {
    std::string format = args->format;
    const bool history = args->inputs.size() > 1 && !args->merge;
    if (format.empty()) {
      if (ends_with(args->out, ".html") || ends_with(args->out, ".htm")) format = "html";
      else if (ends_with(args->out, ".csv")) format = "csv";
      else format = history ? "html" : "md";
    }
    std::string text;
    if (format == "trace-html") {
      if (history) throw InputError("--format trace-html draws one trace file");
      const std::string& path = args->inputs.front();
      const nlohmann::json trace = nlohmann::json::parse(read_text_file(path, "the trace file"), nullptr, false);
      if (trace.is_discarded()) throw InputError(fmt::format("{}: not JSON (a `harness run --trace` file?)", path));
      text = render_trace_html(trace, path);
    } else {
      std::vector<Report> reports;
      for (const auto& input : args->inputs) {
        const nlohmann::json json = read_report(input);
        if (json.value("schema", "") != kReportSchema)
          throw InputError(fmt::format("{}: Google Benchmark JSON, not a harness report: nothing to render "
                                       "(`harness compare` reads it)",
                                       input));
        reports.push_back(decode_report(json, input));
      }
      // Side by side, timings of different GPUs look comparable: say so (issue 34).
      if (auto gpus = different_gpus(reports)) std::fprintf(stderr, "harness: warning: %s\n", gpus->c_str());
      if (history) {
        if (format == "html") text = render_history_html(reports);
        else if (format == "csv") text = render_history_csv(reports);
        else
          throw InputError(fmt::format("a history of {} reports renders as html or csv, not {} (--merge renders them "
                                       "as one report)",
                                       reports.size(), format));
      } else {
        ReportOptions options;
        options.reference = args->reference;
        text = render_report(reports.size() > 1 ? merge_reports(reports) : reports.front(), format, options);
      }
    }
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
