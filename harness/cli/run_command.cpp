// harness run SUITE... : load and validate every suite (all input errors before any
// work), then check, time and report every case x variant.
#include <cstdio>
#include <sstream>

#include <fmt/format.h>

#include "commands.hpp"
#include "console.hpp"
#include "environment.hpp"
#include "harness/error.hpp"
#include "harness/registry.hpp"
#include "plugin_loader.hpp"
#include "report.hpp"
#include "runner.hpp"
#include "suggest.hpp"

namespace harness::cli {

std::string& command_line() {
  static std::string line;
  return line;
}

namespace {

struct RunArgs {
  std::vector<std::string> suites;
  std::string filter;
  std::string variants;
  std::string out;
  int device = 0;
  std::vector<std::string> plugins;
  std::uint64_t seed = 42;
  bool dry_run = false;
  bool quiet = false;
};

// Several suites run as one: their cases in order, one report.
Suite merge(std::vector<Suite> suites) {
  if (suites.size() == 1) return std::move(suites.front());
  Suite all;
  std::vector<std::string> names, files;
  for (auto& s : suites) {
    names.push_back(s.name);
    files.push_back(s.file);
    for (auto& c : s.cases) all.cases.push_back(std::move(c));
  }
  all.name = fmt::format("{}", fmt::join(names, "+"));
  all.file = fmt::format("{}", fmt::join(files, ","));
  all.settings = suites.front().settings;
  return all;
}

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ','))
    if (!item.empty()) out.push_back(item);
  return out;
}

int run(const RunArgs& args) {
  Registry& registry = Registry::instance();
  for (const auto& p : args.plugins) load_plugin(p, registry);

  std::vector<Suite> suites;
  for (const auto& path : args.suites) suites.push_back(load_suite(path, registry));
  Suite suite = merge(std::move(suites));

  RunOptions options;
  options.seed = args.seed;
  options.device = args.device;
  if (!args.filter.empty()) {
    try {
      options.filter = std::regex(args.filter, std::regex::ECMAScript);
    } catch (const std::regex_error& e) {
      throw InputError(fmt::format("--filter '{}': not a valid regular expression: {}", args.filter, e.what()));
    }
  }
  options.variants = split_list(args.variants);
  // A --variants name that no case of the suite has is a typo, not an empty selection.
  for (const auto& name : options.variants) {
    bool known = false;
    std::vector<std::string> all;
    for (const auto& c : suite.cases)
      for (const Variant* v : c.variants) {
        known |= v->name == name;
        all.push_back(v->name);
      }
    if (!known)
      throw InputError(fmt::format("--variants: no case of the suite has a variant '{}'{}", name, did_you_mean(name, all)));
  }

  const auto planned = plan(suite, options);
  if (planned.empty()) throw InputError("nothing to run: the filter and --variants select no result");

  if (args.dry_run) {
    for (const auto& p : planned)
      fmt::print("{:<20} {}  ({})\n", p.c->name, p.name, p.c->location);
    fmt::print("{} results in {} cases (dry run: nothing was executed)\n", planned.size(), suite.cases.size());
    return kExitOk;
  }

  const std::string out_path = args.out.empty() ? default_report_path(suite.name) : args.out;
  // Fail on an unwritable output before measuring anything.
  Journal journal(out_path + ".journal.jsonl");

  const DeviceInfo device = probe_device(args.device);
  Console console(stdout, args.quiet);
  if (!args.quiet) {
    if (device.available)
      fmt::print("harness {} | {} | {} ({} SMs, {:.0f} GiB) | seed {}\n", harness_version(), suite.name, device.name,
                 device.sm_count, device.memory_gib, args.seed);
    else
      fmt::print("harness {} | {} | {}: cuda variants will be skipped | seed {}\n", harness_version(), suite.name,
                 device.unavailable_reason, args.seed);
  }

  Runner runner(options, device);
  RunObserver observer;
  observer.on_start = [&](const std::string& name, std::size_t i, std::size_t n) { console.start(name, i, n); };
  observer.on_result = [&](const Result& r, std::size_t i, std::size_t n) {
    journal.append(result_to_json(r));
    console.result(r, i, n);
  };
  const std::vector<Result> results = runner.run(suite, observer);

  const nlohmann::json report = make_report(environment_json(device, command_line()), suite, results);
  write_file_atomically(out_path, report.dump(2) + "\n");
  console.summary(results);
  fmt::print("report: {}\n", out_path);
  if (runner.fatal_cuda_error())
    fmt::print(stderr, "harness: a CUDA error corrupted the context and ended GPU work early: {}\n"
                       "harness: the report holds every result finished before it; rerun with --isolate to contain the failing variant\n",
               *runner.fatal_cuda_error());

  bool ok = !runner.fatal_cuda_error();
  for (const auto& r : results) ok &= r.status == Status::passed || r.status == Status::skipped;
  return ok ? kExitOk : kExitFailure;
}

}  // namespace

void add_run_command(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<RunArgs>();
  auto* cmd = app.add_subcommand("run", "Check, time and report every case x variant of the suites");
  cmd->add_option("suites", args->suites, "YAML suite files")->required()->check(CLI::ExistingFile);
  cmd->add_option("--filter", args->filter,
                  "Only results whose name matches this regular expression\n"
                  "(names look like gemm/tiled/M:4096/N:4096/K:4096)");
  cmd->add_option("--variants", args->variants, "Only these variants (comma-separated names, e.g. tiled,cublas)");
  cmd->add_option("--out", args->out, "Report path (default reports/run-<suite>-<UTC time>.json)");
  cmd->add_option("--device", args->device, "CUDA device index")->check(CLI::NonNegativeNumber);
  cmd->add_option("--plugin", args->plugins, "Load variants from a plugin shared library (repeatable)")
      ->allow_extra_args(false);
  cmd->add_option("--seed", args->seed, "Seed of the random inputs (default 42)");
  cmd->add_flag("--dry-run", args->dry_run, "Print the expanded cases and results without running them");
  cmd->add_flag("-q,--quiet", args->quiet, "Print only failures, errors and the summary");
  cmd->callback([args, &exit_code] { exit_code = run(*args); });
}

}  // namespace harness::cli
