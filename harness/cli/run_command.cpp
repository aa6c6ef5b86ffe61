// harness run SUITE... : the command line of a run; the run itself is the core's
// (harness/src/run/session.cpp).
#include <memory>
#include <string>
#include <vector>

#include "commands.hpp"
#include "python/python_variants.hpp"
#include "run/pool.hpp"
#include "run/session.hpp"
#include "harness/error.hpp"

namespace harness::cli {

std::string& command_line() {
  static std::string line;
  return line;
}

std::vector<std::string>& raw_arguments() {
  static std::vector<std::string> args;
  return args;
}

namespace {

// The arguments an isolated child is started with: the parent's own, minus the options
// that only the parent acts on.
std::vector<std::string> child_argv() {
  std::vector<std::string> out;
  const auto& raw = raw_arguments();
  for (std::size_t i = 0; i < raw.size(); ++i) {
    const std::string& a = raw[i];
    if (a == "--isolate" || a == "--dry-run") continue;
    if (a == "--out" || a == "--resume" || a == "--timeout") {
      ++i;
      continue;
    }
    if (a.rfind("--out=", 0) == 0 || a.rfind("--resume=", 0) == 0 || a.rfind("--timeout=", 0) == 0) continue;
    out.push_back(a);
  }
  return out;
}

// The arguments a --devices worker is started with: the parent's, minus the launcher's
// own options (each worker is pinned to its device, which it sees as device 0).
std::vector<std::string> worker_argv() {
  std::vector<std::string> out;
  const auto& raw = raw_arguments();
  for (std::size_t i = 0; i < raw.size(); ++i) {
    const std::string& a = raw[i];
    if (a == "--dry-run" || a == "--allow-mixed") continue;
    if (a == "--out" || a == "--resume" || a == "--timeout" || a == "--devices" || a == "--device") {
      ++i;
      continue;
    }
    bool joined = false;
    for (const char* o : {"--out=", "--resume=", "--timeout=", "--devices=", "--device="}) joined |= a.rfind(o, 0) == 0;
    if (joined) continue;
    out.push_back(a);
  }
  return out;
}

}  // namespace

void add_run_command(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<SessionOptions>();
  auto* cmd = app.add_subcommand("run", "Check, time and report every case x variant of the suites");
  cmd->add_option("suites", args->suites, "YAML suite files")->required()->check(CLI::ExistingFile);
  cmd->add_option("--filter", args->filter,
                  "Only results whose name matches this regular expression\n"
                  "(names look like gemm/tiled/M:4096/N:4096/K:4096; the console's M=4096 works too:\n"
                  "an '=' is read as ':', except in (?= lookaheads or escaped as \\=)");
  cmd->add_option("--variants", args->variants, "Only these variants (comma-separated names, e.g. tiled,cublas)");
  cmd->add_option("--out", args->out, "Report path (default reports/run-<suite>-<UTC time>.json)");
  cmd->add_option("--device", args->device, "CUDA device index")->check(CLI::NonNegativeNumber);
  cmd->add_option("--plugin", args->plugins, "Load variants from a plugin shared library (repeatable)")
      ->allow_extra_args(false);
  cmd->add_option("--plugin-dir", args->plugin_dirs,
                  "Load every plugin (*.so) of a directory (repeatable; also HARNESS_PLUGIN_PATH)")
      ->allow_extra_args(false);
  add_python_option(cmd, args->python);
  cmd->add_option("--seed", args->seed, "Seed of the random inputs (default 42)")->check(seed_validator());
  cmd->add_flag("--dry-run", args->dry_run, "Print the expanded cases and results without running them");
  cmd->add_flag("-q,--quiet", args->quiet, "Print only failures, errors and the summary");
  cmd->add_flag("--table", args->table,
                "End with a table of every result (default: the results that did not pass or are\n"
                "marked, as the progress lines showed the rest; a resumed run prints it too)");
  cmd->add_option("--metrics", args->metrics,
                  "CUPTI counters to collect in the profiling pass, comma-separated\n"
                  "(default: the suite's `metrics`, else a default set; `none`: only the kernel\n"
                  "breakdown, no counter passes; see docs/profiling.md)");
  cmd->add_flag("--no-profile", args->no_profile, "Skip the profiling pass (kernel trace, counters, device peaks)");
  cmd->add_flag("--isolate", args->isolate,
                "Run each case in a child process: a variant that crashes or hangs is recorded\n"
                "(crashed / timeout) and the suite goes on");
  cmd->add_option("--timeout", args->timeout,
                  "Seconds one result may take (check + timing) before it is a timeout\n"
                  "(overrides the suite's settings.timeout; 0 = none)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--trace", args->trace,
                  "Write the profiling pass as a timeline (Chrome Trace Event JSON, for Perfetto or\n"
                  "`harness report --format trace-html`): NVTX ranges, kernels, copies, launches\n"
                  "(also settings.trace in the suite)");
  cmd->add_option("--resume", args->resume,
                  "Complete an interrupted run from its journal (<report>.journal.jsonl):\n"
                  "finished results are kept, the rest is run, the report holds all")
      ->check(CLI::ExistingFile);
  cmd->add_option("--timing", args->timing,
                  "events: CUDA events around each launch (default); graph: a CUDA graph of k launches\n"
                  "replayed, per-launch time = replay / k (no launch gaps, for kernels of a few us)");
  cmd->add_option("--stopping", args->stopping,
                  "When to stop sampling: noise (relative noise under the target, default), entropy\n"
                  "(nvbench's entropy criterion), samples (a fixed count, settings.stopping.samples)");
  cmd->add_option("--throttle", args->throttle,
                  "Flag results whose SM clock fell under this share of the maximum (default 0.75)");
  cmd->add_option("--steady", args->steady,
                  "on: warm up until the SM clock settles, then sample (the sustained figure, the burst\n"
                  "beside it); off: sample at once. Default: the suites' settings.steady, else on for\n"
                  "dtype bf16, f16, tf32, fp8 (harness list states it)")
      ->check(CLI::IsMember({"on", "off"}));
  cmd->add_option("--interleave", args->interleave,
                  "on: time the variants of a case in rounds (one batch of each per round), so that a\n"
                  "slow drift (clock, temperature, a busy host) hits them alike; off: each variant's\n"
                  "samples back to back. Default: the suites' settings.interleave, else on for dtype\n"
                  "bf16, f16, tf32, fp8 (power-capped work; harness list states it)")
      ->check(CLI::IsMember({"on", "off"}));
  cmd->add_option("--interleave-order", args->interleave_order,
                  "shuffled: each round takes the variants in a fresh order, seeded by --seed and the\n"
                  "case (default: no variant always follows the same one); fixed: plan order in every\n"
                  "round (A B C A B C). Default: the suites' settings.interleave_order, else shuffled")
      ->check(CLI::IsMember({"shuffled", "fixed"}));
  cmd->add_option("--devices", args->devices,
                  "Shard the suite over devices, one worker process per device: all, a list like 0,1,\n"
                  "or cpu:N (N CPU-only workers). Largest cases first; results carry their device;\n"
                  "collective cases (nccl) run on every device at once")
      ->excludes("--device");
  cmd->add_flag("--allow-skips", args->allow_skips,
                "Exit 0 when a GPU machine's device could not be used and every CUDA result was\n"
                "skipped (default: exit 2, the run measured nothing on the GPU)");
  cmd->add_flag("--allow-mixed", args->allow_mixed, "With --devices: allow GPUs of different models (timings not comparable)");
  cmd->add_option(kPoolChildOption, args->pool_child)->group("");  // hidden: set by --isolate and --devices
  cmd->callback([args, &exit_code] {
    args->command_line = command_line();
    args->child_argv = child_argv();
    args->worker_argv = worker_argv();
    if (!args->python.empty())
      args->add_variants = [files = args->python](Registry& registry) { load_python_variants(files, registry); };
    exit_code = run_session(*args);
  });
}

}  // namespace harness::cli
