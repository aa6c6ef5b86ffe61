#pragma once
// The subcommands of the `harness` executable. Each adds itself to the CLI11 app and
// returns, through `exit_code`, one of harness::ExitCode.
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace harness::cli {

// The command line as typed, for reports ("harness run suites/gemm.yaml --seed 7").
std::string& command_line();
// argv as given (argv[0] included), for re-running the executable in isolated children.
std::vector<std::string>& raw_arguments();

// --seed: a decimal integer 0 .. 2^64-1. CLI11 alone takes "-1" as 2^64-1 and says nothing.
inline CLI::Validator seed_validator() {
  return CLI::Validator(
      [](const std::string& text) -> std::string {
        const bool digits = !text.empty() && text.size() <= 20 &&
                            text.find_first_not_of("0123456789") == std::string::npos &&
                            (text.size() < 20 || text <= "18446744073709551615");
        return digits ? std::string() : "'" + text + "' is not a seed: expected an integer from 0 to 18446744073709551615";
      },
      "UINT64");
}

// --python FILE.py (repeatable), the same for run, gbench and list: variants written in
// Python (docs/python.md), loaded after the plugins.
inline CLI::Option* add_python_option(CLI::App* cmd, std::vector<std::string>& files) {
  return cmd->add_option("--python", files,
                         "Load variants written in Python from this file (repeatable; @harness.variant,\n"
                         "docs/python.md)")
      ->allow_extra_args(false)
      ->check(CLI::ExistingFile);
}

void add_run_command(CLI::App& app, int& exit_code);
void add_list_command(CLI::App& app, int& exit_code);
void add_compare_command(CLI::App& app, int& exit_code);
void add_report_command(CLI::App& app, int& exit_code);
void add_validate_command(CLI::App& app, int& exit_code);
void add_gbench_command(CLI::App& app, int& exit_code);

}  // namespace harness::cli
