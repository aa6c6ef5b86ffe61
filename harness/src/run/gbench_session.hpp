#pragma once
// `harness gbench`: the same suites, plan and checks as `harness run` (a variant that fails
// its check is never timed), then every passing case x variant timed by Google Benchmark
// itself: benchmark::RegisterBenchmark per result, CUDA variants with manual time from
// CUDA events around each iteration (the L2 flush of cold mode outside the timed region),
// CPU variants with Google Benchmark's own clock, FLOP/s and bytes/s as rate counters,
// and Google Benchmark's reporters and --benchmark_* flags for the output.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace harness {

class Registry;

struct GbenchOptions {
  std::vector<std::string> suites;
  std::vector<std::string> plugins;
  std::function<void(Registry&)> add_variants;  // after the plugins: the CLI's --python files
  std::string filter;      // on harness result names, before Google Benchmark's own filter
  std::string variants;    // comma-separated
  int device = 0;
  std::uint64_t seed = 42;
  std::string command_line;
  std::vector<std::string> benchmark_args;  // --benchmark_* flags, passed to Google Benchmark
};

// Returns an ExitCode; InputError (unknown flag, bad suite) before any work.
int run_gbench(const GbenchOptions& options);

}  // namespace harness
