// harness: check, time and profile CUDA kernel variants described by YAML suites.
#include <cstdio>
#include <string>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "commands.hpp"
#include "types/environment.hpp"
#include "harness/error.hpp"

int main(int argc, char** argv) {
  CLI::App app{"harness: checks every kernel variant for correctness, then times it with statistics,\n"
               "and writes a JSON report.",
               "harness"};
  app.footer(
      "Examples:\n"
      "  harness run suites/smoke.yaml                 check + time the smoke suite (no GPU needed)\n"
      "  harness run suites/gemm.yaml --variants tiled,cublas --out reports/gemm.json\n"
      "  harness run suites/gemm.yaml --filter 'M:4096' --dry-run\n"
      "  harness list variants\n"
      "  harness compare reports/baselines/h200/gemm.json.gz reports/gemm.json   regression verdict (exit 1 if slower)\n"
      "  harness report reports/gemm.json --format html --out gemm.html      tables and charts\n"
      "  harness validate reports/gemm.json                                   check against reports/schema.json\n"
      "  harness gbench suites/smoke.yaml --benchmark_format=json            the same checks, timed by Google Benchmark\n"
      "\n"
      "Exit codes: 0 all results passed or were skipped with a reason; 1 a check failed or a\n"
      "variant errored, or compare found a regression; 2 bad input (command line, suite, plugin,\n"
      "report): nothing was run, or a GPU run whose device could not be used (--allow-skips).");
  app.set_version_flag("--version", fmt::format("harness {} (commit {})", harness::harness_version(),
                                                harness::harness_commit()));
  app.require_subcommand(1, 1);
  for (int i = 0; i < argc; ++i) harness::cli::raw_arguments().emplace_back(argv[i]);
  for (int i = 0; i < argc; ++i) {
    if (i) harness::cli::command_line() += ' ';
    harness::cli::command_line() += (i == 0 ? std::string("harness") : std::string(argv[i]));
  }
  int exit_code = harness::kExitOk;
  harness::cli::add_run_command(app, exit_code);
  harness::cli::add_list_command(app, exit_code);
  harness::cli::add_compare_command(app, exit_code);
  harness::cli::add_report_command(app, exit_code);
  harness::cli::add_validate_command(app, exit_code);
  harness::cli::add_gbench_command(app, exit_code);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // CLI11's own printer writes two lines without the prefix; the project's errors are one
    // line, "harness: error: ...", exit 2.
    if (e.get_exit_code() == 0) return app.exit(e);
    std::string message = e.what();
    for (char& c : message)
      if (c == '\n' || c == '\r') c = ' ';
    while (!message.empty() && message.back() == ' ') message.pop_back();
    std::fprintf(stderr, "harness: error: %s (see harness --help)\n", message.c_str());
    return harness::kExitBadInput;
  } catch (const harness::InputError& e) {
    std::fprintf(stderr, "harness: error: %s\n", e.what());
    return harness::kExitBadInput;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "harness: error: %s\n", e.what());
    return harness::kExitFailure;
  }
  return exit_code;
}
