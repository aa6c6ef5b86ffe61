// `harness gbench` (see gbench_session.hpp).
#include "run/gbench_session.hpp"

#include <cstdio>
#include <map>
#include <memory>
#include <regex>
#include <sstream>

#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include "harness/cuda_check.hpp"
#include "harness/error.hpp"
#include "harness/registry.hpp"
#include "measure/l2_flush.hpp"
#include "plugin/plugin_loader.hpp"
#include "profile/nvtx.hpp"
#include "types/environment.hpp"
#include "run/added_variants.hpp"
#include "run/options_text.hpp"
#include "run/runner.hpp"

namespace harness {
namespace {


// Passes the --benchmark_* flags to Google Benchmark; any it does not know is an input
// error, before any work.
void initialize_google_benchmark(const std::vector<std::string>& flags) {
  // Google Benchmark keeps argv[0] (the "executable" of its context): the strings must
  // outlive the run.
  static std::vector<std::string> storage;
  storage = {"harness gbench"};
  for (const auto& f : flags) {
    if (f.rfind("--benchmark_", 0) != 0 && f.rfind("--v=", 0) != 0)
      throw InputError(fmt::format("gbench: unknown option '{}' (Google Benchmark's flags start with --benchmark_)", f));
    storage.push_back(f);
  }
  static std::vector<char*> argv;
  argv.clear();
  for (auto& s : storage) argv.push_back(s.data());
  int argc = static_cast<int>(argv.size());
  benchmark::Initialize(&argc, argv.data());
  if (argc > 1) throw InputError(fmt::format("gbench: unknown Google Benchmark flag '{}'", argv[1]));
}

// The instance of one case, kept while consecutive benchmarks use it (Google Benchmark
// runs them in registration order unless --benchmark_enable_random_interleaving).
class CaseCache {
 public:
  explicit CaseCache(std::uint64_t seed) : seed_(seed) {}
  Instance& get(const Case& c, Backend backend) {
    if (current_ != &c) {
      instance_.reset();  // free the previous case's buffers first
      instance_ = c.problem->make_instance(c.params, seed_);
      current_ = &c;
    }
    instance_->prepare(backend);
    return *instance_;
  }

 private:
  std::uint64_t seed_;
  const Case* current_ = nullptr;
  std::unique_ptr<Instance> instance_;
};

// What the registered benchmarks share: the stream, the flusher, events, the cache.
struct GpuContext {
  cudaStream_t stream = nullptr;
  std::unique_ptr<L2Flusher> flusher;
  cudaEvent_t start = nullptr, stop = nullptr;
  ~GpuContext() {
    flusher.reset();
    if (start) HARNESS_CUDA_NOTHROW(cudaEventDestroy(start));
    if (stop) HARNESS_CUDA_NOTHROW(cudaEventDestroy(stop));
    if (stream) HARNESS_CUDA_NOTHROW(cudaStreamDestroy(stream));
  }
  void ensure(int device) {
    if (stream) return;
    HARNESS_CUDA(cudaSetDevice(device));
    HARNESS_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    HARNESS_CUDA(cudaEventCreate(&start));
    HARNESS_CUDA(cudaEventCreate(&stop));
    flusher = std::make_unique<L2Flusher>();
  }
};

struct Shared {
  Shared(std::uint64_t seed, int device_index) : cache(seed), device(device_index) {}
  CaseCache cache;
  GpuContext gpu;
  // Scratch kept across Google Benchmark's repeated calls of a benchmark (and across
  // benchmarks: one runs at a time), so that no call allocates again.
  Workspace workspace;
  int device = 0;
};

// The body of one registered benchmark: the harness's launch, timed by Google Benchmark.
void run_one(benchmark::State& state, Shared& shared, const Case& c, const Variant& v) {
  NvtxRange case_range(nvtx_case_name(c.name, c.problem->name(), c.params), NvtxPhase::case_);
  NvtxRange variant_range(nvtx_variant_name(c.problem->name(), v.name, c.params), NvtxPhase::variant);
  try {
    if (v.backend == Backend::cuda) shared.gpu.ensure(shared.device);
    Instance& instance = shared.cache.get(c, v.backend);
    LaunchContext ctx{shared.gpu.stream, &shared.workspace, &c.params, instance.operands(v.backend), &instance};
    const bool cold = c.settings.cache == CacheMode::cold;
    {
      NvtxRange warmup("warmup", NvtxPhase::warmup);
      for (int i = 0; i < std::max(1, c.settings.warmup); ++i) v.launch(ctx);  // allocates the workspace
      if (v.backend == Backend::cuda) HARNESS_CUDA(cudaStreamSynchronize(shared.gpu.stream));
    }
    NvtxRange timed("timed", NvtxPhase::timed);
    if (v.backend == Backend::cuda) {
      cudaStream_t s = shared.gpu.stream;
      for (auto _ : state) {
        if (cold) shared.gpu.flusher->flush(s);  // outside the events
        HARNESS_CUDA(cudaEventRecord(shared.gpu.start, s));
        v.launch(ctx);
        HARNESS_CUDA(cudaEventRecord(shared.gpu.stop, s));
        HARNESS_CUDA(cudaEventSynchronize(shared.gpu.stop));
        float ms = 0;
        HARNESS_CUDA(cudaEventElapsedTime(&ms, shared.gpu.start, shared.gpu.stop));
        state.SetIterationTime(static_cast<double>(ms) * 1e-3);
      }
    } else {
      for (auto _ : state) v.launch(ctx);
    }
    const Work w = c.problem->work(c.params);
    if (w.flops > 0) state.counters["FLOP/s"] = benchmark::Counter(w.flops, benchmark::Counter::kIsIterationInvariantRate);
    if (w.bytes > 0)
      state.counters["bytes/s"] = benchmark::Counter(w.bytes, benchmark::Counter::kIsIterationInvariantRate,
                                                     benchmark::Counter::kIs1024);
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
  }
}

}  // namespace

int run_gbench(const GbenchOptions& args) {
  Registry& registry = Registry::instance();
  load_plugins(args.plugins, {}, registry);
  initialize_google_benchmark(args.benchmark_args);

  const Suite suite = load_suites_with_added(args.suites, registry, args.add_variants);
  RunOptions options;
  options.suite_name = suite.name;
  options.seed = args.seed;
  options.device = args.device;
  options.variants = split_list(args.variants);
  options.check_only = true;
  options.profile = false;
  // Google Benchmark's --benchmark_filter selects among the registered names, which are
  // the harness's result names: apply it before the checks too, so that a filtered run
  // does not check (and compute references for) results it will not time.
  std::string filter = args.filter;
  for (const auto& f : args.benchmark_args)
    if (f.rfind("--benchmark_filter=", 0) == 0 && filter.empty()) filter = f.substr(19);
  if (filter != "all" && filter != ".") options.filter = result_filter(filter, "filter");
  const std::vector<PlannedResult> planned = plan(suite, options);
  if (planned.empty()) {
    RunOptions every = options;
    every.filter.reset();
    every.variants.clear();
    const auto all = plan(suite, every);
    throw InputError(nothing_selected(filter, args.variants, all.empty() ? "" : all.front().name));
  }

  // The checks, as `harness run` does them; messages go to stderr so that Google
  // Benchmark's own output (JSON on stdout, say) stays clean.
  const DeviceInfo device = probe_device(args.device);
  std::vector<Result> checked;
  {
    Runner runner(options, device);
    checked = runner.run(planned, {});
  }
  std::size_t failed = 0, registered = 0;
  auto shared = std::make_shared<Shared>(args.seed, args.device);
  for (std::size_t i = 0; i < checked.size(); ++i) {
    const Result& r = checked[i];
    if (r.status != Status::passed) {
      fmt::print(stderr, "gbench: {} {}: {}\n", to_string(r.status), r.name, r.reason);
      failed += (r.status == Status::skipped) ? 0 : 1;
      continue;
    }
    const Case* c = planned[i].c;
    const Variant* v = planned[i].variant;
    auto* b = benchmark::RegisterBenchmark(r.name.c_str(), [shared, c, v](benchmark::State& state) {
      run_one(state, *shared, *c, *v);
    });
    b->Unit(benchmark::kMicrosecond);
    if (v->backend == Backend::cuda) b->UseManualTime();
    ++registered;
  }
  fmt::print(stderr, "gbench: {} of {} results passed their check and are timed by Google Benchmark\n", registered,
             checked.size());
  benchmark::AddCustomContext("harness_version", harness_version());
  benchmark::AddCustomContext("harness_commit", harness_commit());
  benchmark::AddCustomContext("harness_suite", suite.name);
  benchmark::AddCustomContext("harness_seed", std::to_string(args.seed));
  benchmark::AddCustomContext("gpu", device.available ? device.name : device.unavailable_reason);
  {
    NvtxRange suite_range(suite.name, NvtxPhase::suite);
    if (registered > 0) benchmark::RunSpecifiedBenchmarks();
  }
  benchmark::Shutdown();
  // The registered lambdas hold the device state: release it now, while the CUDA runtime
  // is still up, rather than at static destruction.
  benchmark::ClearRegisteredBenchmarks();
  return failed > 0 ? kExitFailure : kExitOk;
}

}  // namespace harness
