// harness validate REPORT.json... [--schema FILE]
#include <cstdio>

#include <fmt/format.h>

#include "commands.hpp"
#include "harness/error.hpp"
#include "report/schema_validate.hpp"

namespace harness::cli {

void add_validate_command(CLI::App& app, int& exit_code) {
  auto reports = std::make_shared<std::vector<std::string>>();
  auto schema = std::make_shared<std::string>();
  auto* cmd = app.add_subcommand("validate", "Check reports against the report schema (reports/schema.json)");
  cmd->add_option("reports", *reports, "Report files")->required();
  cmd->add_option("--schema", *schema, "Use this schema file instead of the one built into the harness");
  cmd->footer("Exit codes: 0 every report is valid; 2 a report is invalid, truncated, of a newer schema version,\n"
              "or unreadable (one line per problem on standard error).");
  cmd->callback([reports, schema, &exit_code] {
    int code = kExitOk;
    for (const auto& path : *reports) {
      ReportValidation v;
      try {
        v = validate_report_file(path, *schema);
      } catch (const InputError& e) {
        std::fprintf(stderr, "harness: error: %s\n", e.what());
        code = kExitBadInput;
        continue;
      }
      if (v.ok()) {
        fmt::print("{}: valid harness-report, schema version {}, {} results\n", path, v.schema_version, v.results);
        continue;
      }
      code = kExitBadInput;
      const std::size_t shown = std::min<std::size_t>(v.issues.size(), 20);
      for (std::size_t i = 0; i < shown; ++i) fmt::print(stderr, "{}: {}\n", path, format_issue(v.issues[i]));
      if (v.issues.size() > shown) fmt::print(stderr, "{}: ... and {} more\n", path, v.issues.size() - shown);
      fmt::print(stderr, "{}: invalid harness-report ({}{} problem{})\n", path, v.issues.size() >= 50 ? "at least " : "",
                 v.issues.size(), v.issues.size() == 1 ? "" : "s");
    }
    std::fflush(stdout);
    exit_code = code;
  });
}

}  // namespace harness::cli
