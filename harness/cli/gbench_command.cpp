// harness gbench SUITE... [--python FILE.py] [--benchmark_*]: the command line of a Google Benchmark run;
// the run itself is the core's (harness/src/run/gbench_session.cpp).
#include <memory>
#include <string>
#include <vector>

#include "commands.hpp"
#include "python/python_variants.hpp"
#include "run/gbench_session.hpp"

namespace harness::cli {

void add_gbench_command(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<GbenchOptions>();
  auto* cmd = app.add_subcommand(
      "gbench",
      "Check every case x variant as `run` does, then time the passing ones with Google Benchmark\n"
      "(its console/JSON/CSV reporters and --benchmark_* flags; CUDA variants in manual time\n"
      "from CUDA events, CPU variants on its own clock)");
  cmd->add_option("suites", args->suites, "YAML suite files")->required()->check(CLI::ExistingFile);
  cmd->add_option("--filter", args->filter, "Only results whose harness name matches this regular expression");
  cmd->add_option("--variants", args->variants, "Only these variants (comma-separated names)");
  cmd->add_option("--plugin", args->plugins, "Load variants from a plugin shared library (repeatable)")
      ->allow_extra_args(false);
  auto python = std::make_shared<std::vector<std::string>>();
  add_python_option(cmd, *python);
  cmd->add_option("--device", args->device, "CUDA device index")->check(CLI::NonNegativeNumber);
  cmd->add_option("--seed", args->seed, "Seed of the random inputs (default 42)")->check(seed_validator());
  cmd->allow_extras();
  cmd->footer(
      "Google Benchmark's flags pass through (write them with '='):\n"
      "  --benchmark_filter=REGEX  --benchmark_repetitions=N  --benchmark_min_time=SECONDS\n"
      "  --benchmark_format=console|json|csv  --benchmark_out=FILE  --benchmark_out_format=json|console|csv\n"
      "  --benchmark_enable_random_interleaving=true  --benchmark_list_tests=true\n"
      "Use `gbench` for output that Google Benchmark tooling reads (tools/compare.py, dashboards);\n"
      "use `run` for the noise-based stopping rule, the profiling pass (CUPTI counters, kernel\n"
      "breakdown, roofline), the journal and --resume, --isolate, and the harness's own report.\n"
      "Example:\n"
      "  harness gbench suites/gemm.yaml --benchmark_filter=4096 --benchmark_format=json --benchmark_out=gb.json");
  cmd->callback([args, cmd, python, &exit_code] {
    args->benchmark_args = cmd->remaining();
    if (!python->empty())
      args->add_variants = [python](Registry& registry) { load_python_variants(*python, registry); };
    args->command_line = command_line();
    exit_code = run_gbench(*args);
  });
}

}  // namespace harness::cli
