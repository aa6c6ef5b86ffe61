#pragma once
// A whole `harness run`: load and validate every suite (all input errors before any
// work), plan, resume from a journal, run in-process (with a watchdog), in isolated
// children or in --devices workers (both the process pool's, run/pool.hpp), journal every
// result, write the report, print the summary. run_session only decides which. The CLI parses
// the command line into SessionOptions and calls run_session.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace harness {

class Registry;

struct SessionOptions {
  std::vector<std::string> suites;
  std::string filter;               // regular expression on result names
  std::string variants;             // comma-separated variant names
  std::string out;                  // report path ("" = reports/run-<suite>-<time>.json)
  int device = 0;
  std::vector<std::string> plugins;
  std::vector<std::string> plugin_dirs;  // --plugin-dir (HARNESS_PLUGIN_PATH is read too)
  // Adds variants once the plugins are loaded (their problems can be named), before the
  // suites are read: the executable's --python files (harness/src/python, which the core
  // does not link). Empty: nothing.
  std::function<void(Registry&)> add_variants;
  std::vector<std::string> python;  // those --python files: named in the journal's header and the resume command
  std::uint64_t seed = 42;
  bool dry_run = false;
  bool quiet = false;
  bool table = false;               // --table: end with every result, not only those to look at
  bool isolate = false;
  bool no_profile = false;
  std::string metrics;              // comma-separated, or "none"
  double timeout = 0;               // seconds per result (0: the suites' settings)
  std::string resume;               // a journal to complete
  std::string trace;                // --trace: the profiling pass as Chrome Trace Event JSON
  std::string timing;               // "events" | "graph": overrides the suites' settings
  std::string stopping;             // "noise" | "entropy" | "samples"
  std::optional<double> throttle;   // (0, 1]: share of the maximum SM clock
  std::string steady;               // "on" | "off": overrides settings.steady ("" keeps it)
  std::string interleave;           // "on" | "off": overrides settings.interleave ("" keeps it)
  std::string interleave_order;     // "shuffled" | "fixed": overrides settings.interleave_order ("" keeps it)
  std::string command_line;         // as typed, for the report's environment
  std::vector<std::string> child_argv;  // how an isolated child re-runs this command
  std::string devices;               // --devices all|0,1|cpu:N: one worker process per device
  bool allow_skips = false;          // --allow-skips: a GPU run whose device could not be used exits 0
  bool allow_mixed = false;          // --allow-mixed: devices of different models
  std::vector<std::string> worker_argv;  // how a --devices worker re-runs this command
  // Set by the process pool (--isolate, --devices) for its children: their events file.
  std::string pool_child;
};

// Runs it; returns an ExitCode. Input errors throw InputError before any work.
int run_session(const SessionOptions& options);

}  // namespace harness
