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

void add_run_command(CLI::App& app, int& exit_code);
void add_list_command(CLI::App& app, int& exit_code);
void add_compare_command(CLI::App& app, int& exit_code);
void add_report_command(CLI::App& app, int& exit_code);
void add_validate_command(CLI::App& app, int& exit_code);
void add_gbench_command(CLI::App& app, int& exit_code);

}  // namespace harness::cli
