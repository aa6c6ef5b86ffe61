#include "run/runner.hpp"

#include <map>

#include <fmt/format.h>

#include "harness/collective.hpp"
#include "harness/cuda_check.hpp"
#include "harness/error.hpp"
#include "measure/collective.hpp"
#include "measure/rewarm.hpp"
#include "profile/nvtx.hpp"
#include "run/integrity.hpp"
#include "run/recheck.hpp"
#include "run/runner_case.hpp"

namespace harness {

std::string_view to_string(Status status) {
  switch (status) {
    case Status::passed: return "passed";
    case Status::failed: return "failed";
    case Status::skipped: return "skipped";
    case Status::error: return "error";
    case Status::crashed: return "crashed";
    case Status::timeout: return "timeout";
  }
  return "?";
}

std::optional<Status> status_from_string(std::string_view text) {
  for (Status s : kAllStatuses)
    if (to_string(s) == text) return s;
  return std::nullopt;
}

namespace {
constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

bool selected(const Variant& v, const RunOptions& options) {
  if (options.variants.empty()) return true;
  return std::find(options.variants.begin(), options.variants.end(), v.name) != options.variants.end();
}
}  // namespace

std::vector<PlannedResult> plan(const Suite& suite, const RunOptions& options, std::vector<DuplicateResult>* duplicates) {
  std::vector<PlannedResult> out;
  std::map<std::string, const Case*> first;  // result name -> the case that plans it
  for (const auto& c : suite.cases)
    for (const Variant* v : c.variants) {
      if (!selected(*v, options)) continue;
      std::string name = result_name(c, *v);
      if (options.filter && !std::regex_search(name, *options.filter)) continue;
      if (const auto [it, fresh] = first.emplace(name, &c); !fresh) {
        if (duplicates) duplicates->push_back({name, it->second->name, c.name});
        continue;
      }
      out.push_back({&c, v, std::move(name)});
    }
  return out;
}

Runner::Runner(RunOptions options, DeviceInfo device) : options_(std::move(options)), device_(std::move(device)) {}

Runner::~Runner() {
  flusher_.reset();
  if (stream_) HARNESS_CUDA_NOTHROW(cudaStreamDestroy(stream_));
}

void Runner::ensure_stream() {
  if (stream_) return;
  HARNESS_CUDA(cudaSetDevice(device_.index));
  HARNESS_CUDA(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
  flusher_ = std::make_unique<L2Flusher>();
  NvmlOpen nvml = open_nvml(device_.index);
  sensors_ = std::move(nvml.source);
  sensor_note_ = std::move(nvml.note);
}

std::vector<Result> Runner::run(const std::vector<PlannedResult>& planned, const RunObserver& observer) {
  std::vector<Result> results;
  std::size_t index = 0;
  // NVTX: suite > case > variant > phase (check, warmup, timed, recheck, profile).
  NvtxRange suite_range(options_.suite_name, NvtxPhase::suite);
  // Group the plan by case, keeping order.
  for (std::size_t i = 0; i < planned.size() && !fatal_;) {
    std::vector<const Variant*> variants;
    const Case* c = planned[i].c;
    for (; i < planned.size() && planned[i].c == c; ++i) variants.push_back(planned[i].variant);
    run_case(*c, variants, results, observer, index, planned.size());
  }
  return results;
}

Result base_result(const Case& c, const Variant& v) {
  Result r;
  r.name = result_name(c, v);
  r.case_name = c.name;
  r.problem = c.problem->name();
  r.variant = v.name;
  r.backend = std::string(to_string(v.backend));
  r.params = c.params;
  r.settings = c.settings;
  r.work = c.problem->work(c.params);
  if (v.config) {
    // A config function that cannot describe these parameters (e.g. it rejects them as the
    // constraint would) leaves the field empty rather than failing the result.
    try {
      r.config = v.config(c.params);
    } catch (const std::exception&) {
      r.config.clear();
    }
  }
  return r;
}

namespace {

}  // namespace

void derive_rates(Result& r) {
  if (!r.timing || r.timing->stats.median <= 0) return;
  const double t = r.timing->stats.median;
  r.gflops = r.work.flops / t * 1e-9;
  r.gbytes_per_s = r.work.bytes / t * 1e-9;
  r.intensity = r.work.bytes > 0 ? r.work.flops / r.work.bytes : 0;
  const Timing& timing = *r.timing;
  double mhz = timing.clocks ? timing.clocks->median_mhz : 0;
  if (timing.sensors && timing.sensors->sm_mhz_median > 0) mhz = timing.sensors->sm_mhz_median;
  r.cycles_per_launch = mhz > 0 ? t * mhz * 1e6 : 0;
  if (timing.sensors)
    if (const auto watts = timing.sensors->mean_power_w()) {
      r.energy_per_launch_j = *watts * t;
      r.flop_per_j = r.work.flops > 0 && r.energy_per_launch_j > 0 ? r.work.flops / r.energy_per_launch_j : 0;
    }
}

Result unfinished_result(const PlannedResult& p) { return base_result(*p.c, *p.variant); }

void Runner::run_case(const Case& c, const std::vector<const Variant*>& variants, std::vector<Result>& out,
                      const RunObserver& observer, std::size_t& index, std::size_t total) {
  NvtxRange case_range(nvtx_case_name(c.name, c.problem->name(), c.params), NvtxPhase::case_);
  CaseState state{c, nullptr, {}, {}, {}, {}, {}, nullptr, {}};
  state.tolerance = c.tolerance.value_or(c.problem->tolerance(c.params));
  state.work = c.problem->work(c.params);
  state.reference_name = c.reference.value_or(c.problem->reference_variant(c.params));
  const Variant* ref = Registry::instance().find_variant(c.problem->name(), state.reference_name);
  state.reference = ref;

  const bool needs_device = ref && ref->backend == Backend::cuda;
  bool any_cuda = needs_device;
  for (const Variant* v : variants) any_cuda |= v->backend == Backend::cuda;

  try {
    if (!ref) {
      state.reference_problem = fmt::format("reference variant '{}' is not registered", state.reference_name);
    } else if (fatal_ && needs_device) {
      state.reference_problem = "not run: an earlier CUDA error corrupted the context";
    } else if (needs_device && !device_.available) {
      state.reference_problem = fmt::format("reference '{}' needs a CUDA device ({})", state.reference_name, device_.unavailable_reason);
    } else if (auto why = ref->constraint ? ref->constraint(c.params) : std::nullopt) {
      state.reference_problem = fmt::format("reference '{}' does not support these parameters: {}", state.reference_name, *why);
    }
    // Skip before allocating when the operands cannot fit in device or host memory.
    const OperandBytes need = memory_need(*c.problem, c.params);
    if (!state.reference_problem && any_cuda && device_.available && !fatal_) {
      ensure_stream();
      std::size_t free_b = 0, total_b = 0;
      HARNESS_CUDA(cudaMemGetInfo(&free_b, &total_b));
      if (need.device > free_b)
        state.reference_problem = fmt::format("out of memory (needs {:.2f} GiB, free {:.2f} GiB)",
                                              static_cast<double>(need.device) / kGiB, static_cast<double>(free_b) / kGiB);
    }
    if (!state.reference_problem)
      if (const auto avail = host_memory_available(); avail && need.host > *avail)
        state.reference_problem = fmt::format("out of host memory (needs {:.2f} GiB, available {:.2f} GiB)",
                                              static_cast<double>(need.host) / kGiB, static_cast<double>(*avail) / kGiB);
    if (!state.reference_problem) {
      state.instance = c.problem->make_instance(c.params, options_.seed);
      // The reference run: same path as a checked run, outputs kept.
      NvtxRange ref_range(nvtx_variant_name(c.problem->name(), ref->name, c.params), NvtxPhase::variant);
      NvtxRange check_range("check", NvtxPhase::check);
      Workspace ws;
      state.instance->prepare(ref->backend);
      LaunchContext ctx{stream_, &ws, &c.params, state.instance->operands(ref->backend), state.instance.get()};
      state.reference_outputs = checked_run(*state.instance, *ref, ctx);
    }
  } catch (const OutOfMemory& e) {
    state.reference_problem = fmt::format("reference '{}': {}", state.reference_name, e.what());
  } catch (const CudaError& e) {
    if (e.sticky()) fatal_ = e.what();
    state.reference_problem = fmt::format("reference '{}' failed: {}", state.reference_name, e.what());
  } catch (const std::exception& e) {
    state.reference_problem = fmt::format("reference '{}' failed: {}", state.reference_name, e.what());
  }

  if (interleaves(state, variants)) {
    run_case_interleaved(state, variants, out, observer, index, total);
    return;
  }
  for (const Variant* v : variants) {
    ++index;
    Result r = base_result(c, *v);
    if (observer.on_start) observer.on_start(r.name, index, total);
    if (state.reference_problem) {
      r.reference = state.reference_name;
      const bool is_failure = state.reference_problem->find("failed") != std::string::npos;
      r.status = is_failure ? Status::error : Status::skipped;
      r.reason = *state.reference_problem;
      // A CUDA variant without a device is skipped for that reason, whatever the reference.
      if (v->backend == Backend::cuda && !device_.available) {
        r.status = Status::skipped;
        r.reason = device_.unavailable_reason;
      }
    } else {
      r = run_variant(state, *v);
    }
    if (observer.on_result) observer.on_result(r, index, total);
    const bool crashed = r.status == Status::crashed;
    out.push_back(std::move(r));
    if (crashed) break;  // the context is gone: the caller ends the run (or a fresh child goes on)
  }
}

std::optional<std::string> Runner::skip_reason(const Case& c, const Variant& v) {
  if (v.backend == Backend::cuda && !device_.available) return device_.unavailable_reason;
  if (v.backend == Backend::cuda && fatal_)
    return std::string("not run: an earlier CUDA error corrupted the context (rerun with --isolate)");
  if (v.constraint)
    if (auto why = v.constraint(c.params)) return why;
  return std::nullopt;
}

Result Runner::run_variant(CaseState& state, const Variant& v) {
  const Case& c = state.c;
  NvtxRange variant_range(nvtx_variant_name(c.problem->name(), v.name, c.params), NvtxPhase::variant);
  Result r = base_result(c, v);
  r.reference = state.reference_name;
  if (auto why = skip_reason(c, v)) {
    r.status = Status::skipped;
    r.reason = *why;
    return r;
  }
  Workspace ws;
  guarded(r, [&] { check_time_profile(state, v, ws, r); });
  return r;
}

void Runner::guarded(Result& r, const std::function<void()>& work) {
  try {
    work();
  } catch (const OutOfMemory& e) {
    r.status = Status::skipped;
    r.reason = e.what();
    const std::string& w = r.reason;
    if (w.rfind("out of memory", 0) != 0) r.reason = "out of memory: " + w;
  } catch (const CudaError& e) {
    r.status = Status::error;
    r.reason = e.what();
    if (e.sticky()) {
      // A faulting kernel (illegal address, misaligned access, device assert) kills the
      // context: the variant crashed, and this process can run no more CUDA work.
      fatal_ = e.what();
      r.status = Status::crashed;
    }
  } catch (const std::exception& e) {
    r.status = Status::error;
    r.reason = e.what();
  }
}

void Runner::check_time_profile(CaseState& state, const Variant& v, Workspace& ws, Result& r) {
  std::optional<LaunchContext> ctx;
  if (!prepare_and_check(state, v, ws, ctx, r)) return;
  time_variant(state.c, v, *ctx, r);
  after_timing(state, v, ws, *ctx, r);
}

bool Runner::prepare_and_check(CaseState& state, const Variant& v, Workspace& ws, std::optional<LaunchContext>& ctx,
                               Result& r) {
  const Case& c = state.c;
  if (v.backend == Backend::cuda) {
    ensure_stream();
    if (v.workspace_bytes) {
      const std::size_t need = v.workspace_bytes(c.params);
      std::size_t free_b = 0, total_b = 0;
      HARNESS_CUDA(cudaMemGetInfo(&free_b, &total_b));
      if (need > free_b) {
        r.status = Status::skipped;
        r.reason = fmt::format("out of memory (needs {:.2f} GiB, free {:.2f} GiB)",
                               static_cast<double>(need) / kGiB, static_cast<double>(free_b) / kGiB);
        return false;
      }
    }
  }
  Instance& inst = *state.instance;
  inst.prepare(v.backend);
  ctx.emplace(LaunchContext{stream_, &ws, &c.params, inst.operands(v.backend), &inst});
  r.io_device_bytes = inst.device_bytes();

  // Checked run: poisoned outputs, one launch, compare.
  {
    NvtxRange check_range("check", NvtxPhase::check);
    r.check = compare_outputs(checked_run(inst, v, *ctx), state.reference_outputs, state.tolerance);
  }
  // A collective's ranks launch in step: a rank whose check failed still takes part in
  // the timed launches (its peers would wait for it) and is reported failed after them.
  if ((!r.check->passed && !c.problem->collective_at(c.params)) || options_.check_only) {
    r.status = r.check->passed ? Status::passed : Status::failed;
    if (!r.check->passed) r.reason = "check failed: " + r.check->summary();
    r.workspace_peak_bytes = ws.peak_bytes();
    return false;
  }
  return true;
}

void Runner::after_timing(CaseState& state, const Variant& v, Workspace& ws, LaunchContext& ctx, Result& r) {
  const Case& c = state.c;
  Instance& inst = *state.instance;
  r.workspace_peak_bytes = ws.peak_bytes();
  r.extra = inst.extra();
  r.status = Status::passed;
  if (!r.check->passed) {
    r.status = Status::failed;
    r.reason = "check failed: " + r.check->summary();
  }
  // A collective's ranks would each re-check alone: the re-check is for single-device runs.
  if (r.status == Status::passed && state.reference && !c.problem->collective_at(c.params)) {
    NvtxRange recheck_range("recheck", NvtxPhase::check);
    recheck_on_fresh_inputs(inst, v, ctx, *state.reference, state.tolerance, options_.seed, state.fresh, r);
  }
  derive_rates(r);
  r.throttled = r.timing && r.timing->clocks && r.timing->clocks->throttled();
  // Not for a collective: a counter replay of one rank's kernel would wait for its peers.
  // Not a variant that failed its re-check: a failing variant is never profiled.
  if (v.backend == Backend::cuda && options_.profile && r.status == Status::passed && !c.problem->collective_at(c.params))
    profile_variant(c, v, ctx, r);
  // After the profiling pass, which measures the peaks the roof is made of.
  if (!c.problem->collective_at(c.params)) judge_roof(r, peaks_ && peaks_->measured() ? &*peaks_ : nullptr, device_.l2_bytes);
}

// Timed runs. Outputs are left as the runs leave them (in/out operands accumulate, which
// changes values, not the work).
void Runner::time_variant(const Case& c, const Variant& v, LaunchContext& ctx, Result& r) {
  if (v.backend != Backend::cuda) {
    r.timing = time_cpu([&] { v.launch(ctx); }, c.settings);
    return;
  }
  // A collective runs in step on every rank: the same number of launches everywhere (a
  // fixed sample count, no time cap) and no L2 flush between them (a rank flushing while
  // its peers wait inside the collective would time their waiting).
  MeasureSettings settings = c.settings;
  if (c.problem->collective_at(c.params)) {
    settings.stopping.rule = StoppingRule::samples;
    settings.fixed_launches = true;
    settings.max_time = 1e9;
    settings.cache = CacheMode::hot;
    settings.timing = TimingMode::events;  // graph timing sizes its replay from a timing
    // No steady warm-up either: its batch count follows the clock, which differs per rank.
    settings.steady = false;
    r.settings.steady = false;
    // With the problem's barrier: nccl-tests' batches (measure/collective.hpp).
    if (const RankBarrier* barrier = rank_barrier(c.problem->name())) {
      r.timing = time_collective([&] { v.launch(ctx); }, [&] { (*barrier)(stream_); }, stream_, settings,
                                 collective_ops_per_sample(r.work.bytes));
      HARNESS_CUDA(cudaGetLastError());
      return;
    }
  }
  r.timing = time_cuda([&] { v.launch(ctx); }, stream_, settings, flusher_.get(), sensors_.get());
  HARNESS_CUDA(cudaGetLastError());
}

std::function<void()> Runner::flush_before_each(const Case& c) {
  if (c.settings.cache != CacheMode::cold) return {};
  return [this] { flusher_->flush(stream_); };
}

// Profiling: its own pass after timing (kernel trace, counters with replay), so it never
// perturbs the timed samples.
void Runner::profile_variant(const Case& c, const Variant& v, LaunchContext& ctx, Result& r) {
  NvtxRange profile_range("profile", NvtxPhase::profile);
  try {
    if (!collector_) collector_ = std::make_unique<MetricCollector>(device_.index);
    if (!peaks_) peaks_ = measure_device_peaks(device_.index);
    const std::function<void()> before = flush_before_each(c);
    ProfileOptions po;
    po.metrics = !options_.metrics.empty() ? options_.metrics : c.metrics;
    po.counters = options_.counters;
    // A steady result was timed in the sustained (power-capped) state: put the GPU back
    // in it first (measure/rewarm.hpp), or the traced launches run at the burst clock.
    const double rewarm_s = r.timing ? rewarm_seconds(*r.timing) : 0.0;
    const int rewarm_launches = rewarm([&] { v.launch(ctx); }, before, stream_, rewarm_s);
    // The clock of the profiling pass's kernel trace (NVML only; the counter passes after
    // it replay the kernel with idle gaps, at another clock): the trust check compares it
    // with the timed batches' clock.
    std::unique_ptr<SensorSampler> sampler;
    if (sensors_) sampler = std::make_unique<SensorSampler>(*sensors_, kProfileSensorPeriod);
    po.after_trace = [&sampler] {
      if (sampler) sampler->stop();
    };
    const ProfileResult p = profile_pass(*collector_, [&] { v.launch(ctx); }, stream_, po, r.work, r.timing->stats.median,
                                         peaks_->measured() ? &*peaks_ : nullptr, before, dtype_param(r.params));
    judge_timed_region(r, p.kernels);
    r.profile = to_json(p);
    if (rewarm_launches > 0 && r.profile.is_object())
      r.profile["rewarm"] = {{"seconds", rewarm_s}, {"launches", rewarm_launches}};
    if (sampler) {
      sampler->stop();
      const SensorStats s = summarize_sensors(sampler->since(0), 0, sampler->period());
      if (s.sm_mhz_median > 0 && r.profile.is_object())
        r.profile["clock"] = {{"source", "nvml"}, {"during", "kernel trace"}, {"samples", s.samples}, {"sm_mhz_min", s.sm_mhz_min},
                              {"sm_mhz_median", s.sm_mhz_median}, {"sm_mhz_max", s.sm_mhz_max}};
    }
  } catch (const CudaError& e) {
    if (e.sticky()) throw;
    r.profile = {{"error", e.what()}};
  }
}

}  // namespace harness
