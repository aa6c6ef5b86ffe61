// harness compare BASELINE.json CANDIDATE.json [--threshold PCT] [--alpha A] [--format F]
#include <cstdio>
#include <regex>

#include <fmt/format.h>

#include "commands.hpp"
#include "compare/compare.hpp"
#include "render/compare_text.hpp"
#include "render/compare_html.hpp"
#include "report/report.hpp"
#include "harness/error.hpp"
#include "report/report_model.hpp"

namespace harness::cli {

namespace {

struct CompareArgs {
  std::string baseline, candidate;
  std::string threshold = "5";
  double alpha = 0.05;
  double min_effect = 0.3;
  std::string format = "text";
  bool fail_on_missing = false;
  std::vector<std::string> fail_on;
  std::string filter;
  std::string out;
};

double parse_percent(std::string text) {
  if (!text.empty() && text.back() == '%') text.pop_back();
  std::size_t used = 0;
  double v = 0;
  try {
    v = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != text.size() || !(v >= 0) || v >= 1000)
    throw InputError(fmt::format("--threshold '{}': expected a percentage such as 5 or 2.5%", text));
  return v / 100;
}

}  // namespace

void add_compare_command(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<CompareArgs>();
  auto* cmd = app.add_subcommand("compare", "Compare a candidate report with a baseline: a regression verdict per benchmark");
  cmd->add_option("baseline", args->baseline, "Baseline report (harness JSON or Google Benchmark JSON)")->required();
  cmd->add_option("candidate", args->candidate, "Candidate report (harness JSON or Google Benchmark JSON)")->required();
  cmd->add_option("--threshold", args->threshold,
                  "Smallest change of the median time that counts, in percent (default 5)");
  cmd->add_option("--alpha", args->alpha, "Significance level of the two-sided U test (default 0.05)")
      ->check(CLI::Range(1e-12, 0.5));
  cmd->add_option("--min-effect-size", args->min_effect,
                  "Smallest |Cliff's delta| (2 P(candidate slower) - 1) that counts; 0 turns it off (default 0.3)")
      ->check(CLI::Range(0.0, 1.0));
  cmd->add_option("--format", args->format, "text (default), md, json or html (a self-contained page)")
      ->check(CLI::IsMember({"text", "md", "json", "html"}));
  cmd->add_option("--out", args->out, "Write here (atomically) instead of to standard output");
  cmd->add_option("--filter", args->filter,
                  "Compare only benchmarks whose name matches this regular expression, e.g. '/cuda/|/cublas/'\n"
                  "or '^(?!.*/cpu/)' to leave out host variants");
  cmd->add_flag("--fail-on-missing", args->fail_on_missing,
                "Count a benchmark of the baseline that the candidate did not time as a regression");
  cmd->add_option("--fail-on", args->fail_on,
                  "Count these verdicts as a regression too (exit 1): ambiguous (for strict jobs)")
      ->check(CLI::IsMember({"ambiguous"}))
      ->allow_extra_args(false);
  cmd->footer(
      "Verdicts: faster, slower, same, ambiguous, new, missing, failed, skipped. Ambiguous: a change the\n"
      "runs cannot decide (their interquartile ranges overlap, their SM clocks differ by more than 5%, or\n"
      "one was throttled); no regression unless --fail-on ambiguous. A change counts when the median\n"
      "time moves by at least the threshold, the samples are separated (|Cliff's delta| at least the\n"
      "minimum effect size) and a two-sided Mann-Whitney U test on the samples is significant; with\n"
      "too few samples (or Google Benchmark aggregates only) the threshold alone decides.\n"
      "Results are matched by problem + variant + parameters; Google Benchmark JSON by run name.\n"
      "\n"
      "Exit codes: 0 no regression; 1 regression (a benchmark slower, or a check failing in the\n"
      "candidate; ambiguous with --fail-on ambiguous); 2 bad input (unreadable report, bad option,\n"
      "a timed result whose figures are not finite).");
  cmd->callback([args, &exit_code] {
    CompareOptions options;
    options.threshold = parse_percent(args->threshold);
    options.alpha = args->alpha;
    options.min_effect_size = args->min_effect;
    options.fail_on_missing = args->fail_on_missing;
    for (const auto& v : args->fail_on) options.fail_on_ambiguous |= v == "ambiguous";
    if (!args->filter.empty()) {
      try {
        options.filter = std::regex(args->filter, std::regex::ECMAScript);
      } catch (const std::regex_error& e) {
        throw InputError(fmt::format("--filter '{}': not a valid regular expression: {}", args->filter, e.what()));
      }
    }
    const Report base = read_report_model(args->baseline);
    const Report cand = read_report_model(args->candidate);
    const Comparison c = compare(base, cand, options);
    const std::string text =
        args->format == "html" ? render_comparison_html(c, base, cand) : render_comparison(c, args->format);
    if (args->out.empty() || args->out == "-") {
      std::fwrite(text.data(), 1, text.size(), stdout);
      std::fflush(stdout);
    } else {
      write_file_atomically(args->out, text);
      std::fprintf(stderr, "%s comparison: %s\n", args->format.c_str(), args->out.c_str());
    }
    exit_code = comparison_exit_code(c) ? kExitFailure : kExitOk;
  });
}

}  // namespace harness::cli
