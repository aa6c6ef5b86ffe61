#include "measure/measure.hpp"
#include "measure/stopping.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <stdexcept>

#include "harness/cuda_check.hpp"
#include "harness/error.hpp"
#include "measure/clock_probe.hpp"
#include "measure/steady.hpp"
#include "profile/nvtx.hpp"

namespace harness {

namespace {
using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

constexpr double kBatchSeconds = 0.05;   // a batch of samples between host round trips
constexpr std::size_t kMaxBatch = 256;
constexpr double kGraphReplaySeconds = 100e-6;  // launches per graph: about this much work
constexpr std::size_t kMaxGraphLaunches = 1000;

// Events for up to `n` samples of one batch, created once.
struct EventPool {
  std::vector<cudaEvent_t> start, stop;
  ~EventPool() {
    for (auto e : start) HARNESS_CUDA_NOTHROW(cudaEventDestroy(e));
    for (auto e : stop) HARNESS_CUDA_NOTHROW(cudaEventDestroy(e));
  }
  void reserve(std::size_t n) {
    while (start.size() < n) {
      cudaEvent_t a, b;
      HARNESS_CUDA(cudaEventCreate(&a));
      start.push_back(a);
      HARNESS_CUDA(cudaEventCreate(&b));
      stop.push_back(b);
    }
  }
};

// k launches captured once into an executable graph.
class LaunchGraph {
 public:
  LaunchGraph(const std::function<void()>& launch, cudaStream_t stream, std::size_t k) {
    HARNESS_CUDA(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
    try {
      for (std::size_t i = 0; i < k; ++i) launch();
    } catch (...) {
      cudaGraph_t partial = nullptr;
      (void)cudaStreamEndCapture(stream, &partial);  // leave the stream usable
      if (partial) (void)cudaGraphDestroy(partial);
      (void)cudaGetLastError();
      throw;
    }
    HARNESS_CUDA(cudaStreamEndCapture(stream, &graph_));
    HARNESS_CUDA(cudaGraphInstantiate(&exec_, graph_, 0));
  }
  ~LaunchGraph() {
    if (exec_) HARNESS_CUDA_NOTHROW(cudaGraphExecDestroy(exec_));
    if (graph_) HARNESS_CUDA_NOTHROW(cudaGraphDestroy(graph_));
  }
  void replay(cudaStream_t stream) { HARNESS_CUDA(cudaGraphLaunch(exec_, stream)); }

 private:
  cudaGraph_t graph_ = nullptr;
  cudaGraphExec_t exec_ = nullptr;
};

// One launch timed with events (the estimate that sizes graphs).
double time_one(const std::function<void()>& launch, cudaStream_t stream) {
  EventPool e;
  e.reserve(1);
  HARNESS_CUDA(cudaEventRecord(e.start[0], stream));
  launch();
  HARNESS_CUDA(cudaEventRecord(e.stop[0], stream));
  HARNESS_CUDA(cudaEventSynchronize(e.stop[0]));
  float ms = 0;
  HARNESS_CUDA(cudaEventElapsedTime(&ms, e.start[0], e.stop[0]));
  return static_cast<double>(ms) * 1e-3;
}

// Device buffer of clock probes: two words per batch.
struct ClockProbes {
  unsigned long long* d = nullptr;
  std::size_t capacity = 0, used = 0;
  ~ClockProbes() {
    if (d) HARNESS_CUDA_NOTHROW(cudaFree(d));
  }
  void enqueue(cudaStream_t stream) {
    if (used == capacity) return;  // past the buffer: later batches go unprobed
    HARNESS_CUDA(clocks::probe(d + 2 * used, stream));
    ++used;
  }
  // The newest probe's clock (MHz), 0 when none; one small copy (steady warm-up only).
  double last_mhz() const {
    if (used == 0) return 0;
    unsigned long long h[2] = {0, 0};
    HARNESS_CUDA(cudaMemcpy(h, d + 2 * (used - 1), sizeof h, cudaMemcpyDeviceToHost));
    return h[1] > 0 ? static_cast<double>(h[0]) / static_cast<double>(h[1]) * 1e3 : 0.0;
  }
  std::vector<double> read_mhz() const {
    std::vector<unsigned long long> h(2 * used);
    if (used) HARNESS_CUDA(cudaMemcpy(h.data(), d, h.size() * sizeof(h[0]), cudaMemcpyDeviceToHost));
    std::vector<double> mhz;
    for (std::size_t i = 0; i < used; ++i)
      if (h[2 * i + 1] > 0) mhz.push_back(static_cast<double>(h[2 * i]) / static_cast<double>(h[2 * i + 1]) * 1e3);
    return mhz;
  }
};

double device_max_clock_mhz() {
  int device = 0, khz = 0;
  HARNESS_CUDA(cudaGetDevice(&device));
  HARNESS_CUDA(cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, device));
  return khz / 1e3;
}

// Enqueues timed samples back to back (an L2 flush before each in cold mode, outside
// the sample) and one clock probe after them, waits, and hands back per-launch seconds.
struct BatchTimer {
  const std::function<void()>& launch;
  cudaStream_t stream;
  L2Flusher* flusher;  // null: hot
  LaunchGraph* graph;  // null: one launch per sample
  ClockProbes& probes;
  double launches_per_sample = 1;
  EventPool events;

  std::vector<double> run(std::size_t batch) {
    events.reserve(batch);
    for (std::size_t i = 0; i < batch; ++i) {
      if (flusher) flusher->flush(stream);  // outside the timed region
      HARNESS_CUDA(cudaEventRecord(events.start[i], stream));
      if (graph) graph->replay(stream);
      else launch();
      HARNESS_CUDA(cudaEventRecord(events.stop[i], stream));
    }
    probes.enqueue(stream);  // the clock right after the batch, outside every sample
    HARNESS_CUDA(cudaStreamSynchronize(stream));
    std::vector<double> out(batch);
    for (std::size_t i = 0; i < batch; ++i) {
      float ms = 0;
      HARNESS_CUDA(cudaEventElapsedTime(&ms, events.start[i], events.stop[i]));
      out[i] = static_cast<double>(ms) * 1e-3 / launches_per_sample;
    }
    return out;
  }
};

// Sensors: every few milliseconds (measure/sensors.hpp says why a thread). 2 ms: over a
// 0.5 s window ~250 readings, and four NVML queries of tens of microseconds each leave
// the CPU nearly idle.
constexpr double kSensorPeriod = 0.002;

// steady: true. The clock comes from NVML's samples where there are sensors, else from
// the probe after each warm-up batch.
SteadyState settle(BatchTimer& timer, SensorSampler* sampler, const SteadySettings& settings) {
  NvtxRange range("steady", NvtxPhase::warmup);
  const double from = sampler ? sampler->now() : 0;
  const auto t0 = Clock::now();
  double seen = from;
  SteadyHooks hooks;
  hooks.run_batch = [&](std::size_t n) { return timer.run(n); };
  hooks.now = [&] { return seconds_since(t0); };
  hooks.clock_source = sampler ? "nvml" : "probe";
  hooks.clock = [&] {
    std::vector<std::pair<double, double>> out;
    if (sampler) {
      for (const auto& s : sampler->since(seen)) {
        if (s.sm_mhz > 0) out.emplace_back(s.t_s - from, s.sm_mhz);
        seen = s.t_s + 1e-9;  // since() is inclusive: the next call starts past this one
      }
    } else if (const double mhz = timer.probes.last_mhz(); mhz > 0) {
      out.emplace_back(seconds_since(t0), mhz);
    }
    return out;
  };
  SteadyState st = warm_until_steady(hooks, settings);
  timer.probes.used = 0;  // the timed batches' clocks start afresh
  return st;
}

constexpr double kMinCounterSeconds = 0.25;

// The sensors over the timed region [from, now] of `sampler`, with the energy counter's
// readings at its two ends (or the power samples integrated where there is no counter).
SensorStats sensor_summary(SensorSampler& sampler, SensorSource& source, double from, std::optional<double> e0_mj,
                           std::optional<double> e1_mj, double seconds) {
  const std::vector<SensorSample> samples = sampler.since(from);
  SensorStats st = summarize_sensors(samples, source.max_sm_mhz(), sampler.period());
  st.seconds = seconds;
  // The counter where it moved over a region long enough for its update steps (tens of
  // milliseconds on some parts) to be small; else the power samples integrated.
  if (e0_mj && e1_mj && *e1_mj > *e0_mj && seconds >= kMinCounterSeconds) {
    st.energy_j = (*e1_mj - *e0_mj) * 1e-3;
    st.energy_source = "counter";
  } else if (auto j = integrate_power_j(samples)) {
    st.energy_j = j;
    st.energy_source = "power samples";
  }
  return st;
}

void finish(Timing& t, const StoppingCriterion& criterion, const MeasureSettings& settings, Clock::time_point t0) {
  t.samples = criterion.samples();
  t.stats = compute_stats(t.samples);
  t.noise_reached = t.stats.has_noise() && t.stats.rel_noise <= settings.noise;
  t.stopping_rule = std::string(to_string(settings.stopping.rule));
  t.wall_time = seconds_since(t0);
}

}  // namespace

ClockStats clock_stats(std::vector<double> mhz, double max_mhz, double threshold) {
  ClockStats c;
  c.max_mhz = max_mhz;
  c.threshold = threshold;
  c.mhz = std::move(mhz);
  if (c.mhz.empty()) return c;
  const Stats s = compute_stats(c.mhz);
  c.min_mhz = s.min;
  c.median_mhz = s.median;
  for (double v : c.mhz) c.throttled_batches += v < threshold * max_mhz ? 1 : 0;
  return c;
}

bool should_stop(const std::vector<double>& samples, double elapsed_wall, const MeasureSettings& settings,
                 std::string* reason) {
  StoppingCriterion c(settings);
  for (double s : samples) c.add(s);
  return c.finished(elapsed_wall, reason);
}

Timing time_cuda(const std::function<void()>& launch, cudaStream_t stream, const MeasureSettings& settings,
                 L2Flusher* flusher, SensorSource* sensors) {
  Timing t;
  t.mode = "events";
  const bool cold = flusher && settings.cache == CacheMode::cold;
  const auto t0 = Clock::now();
  // From the warm-up on: steady: true reads the clock while it warms up.
  std::unique_ptr<SensorSampler> sampler;
  if (sensors) sampler = std::make_unique<SensorSampler>(*sensors, kSensorPeriod);
  {
    NvtxRange warmup_range("warmup", NvtxPhase::warmup);
    for (int i = 0; i < settings.warmup; ++i) {
      if (cold) flusher->flush(stream);
      launch();
    }
    HARNESS_CUDA(cudaStreamSynchronize(stream));
  }

  // Graph mode: k launches per replay, k sized from one timed launch.
  std::unique_ptr<LaunchGraph> graph;
  if (settings.timing == TimingMode::graph) {
    const double one = std::max(time_one(launch, stream), 1e-7);
    const std::size_t k = std::clamp<std::size_t>(static_cast<std::size_t>(kGraphReplaySeconds / one), 1, kMaxGraphLaunches);
    try {
      graph = std::make_unique<LaunchGraph>(launch, stream, k);
      t.mode = "graph";
      t.launches_per_sample = k;
    } catch (const CudaError& e) {
      if (e.sticky()) throw;
      t.note = std::string("graph capture failed (") + e.what() + "); timed with events";
    } catch (const std::exception& e) {
      t.note = std::string("graph capture failed (") + e.what() + "); timed with events";
    }
  }

  ClockProbes probes;
  probes.capacity = 4096;
  HARNESS_CUDA(cudaMalloc(reinterpret_cast<void**>(&probes.d), probes.capacity * 2 * sizeof(unsigned long long)));
  BatchTimer timer{launch, stream, cold ? flusher : nullptr, graph.get(), probes,
                   static_cast<double>(t.launches_per_sample), {}};
  // A collective never settles here: its launches are fixed (every rank the same count).
  const bool steady = settings.steady.value_or(false) && !settings.fixed_launches;
  if (steady) t.steady = settle(timer, sampler.get(), settings.steady_settings);

  NvtxRange timed_range("timed", NvtxPhase::timed);
  StoppingCriterion criterion(settings);
  // With steady, max_time counts from the first timed sample, not from the warm-up.
  const auto timed_t0 = steady ? Clock::now() : t0;
  const double sensors_from = sampler ? sampler->now() : 0;
  const std::optional<double> energy0 = sensors ? sensors->energy_mj() : std::nullopt;
  // The first batch of one sample estimates the run time. With fixed launches (a
  // collective) the batches are fixed too: stopping.samples samples in batches of
  // kMaxBatch, so that the number of launches does not depend on the timings.
  const bool fixed = settings.fixed_launches;
  const auto fixed_count = static_cast<std::size_t>(std::max(settings.stopping.samples, 1));
  std::size_t batch = fixed ? std::min(fixed_count, kMaxBatch) : 1;
  const double per_sample_launches = static_cast<double>(t.launches_per_sample);
  for (;;) {
    for (double s : timer.run(batch)) criterion.add(s);
    if (criterion.finished(seconds_since(timed_t0), &t.stop_reason)) break;
    // Size the next batch to about 50 ms of work, so the stopping rule is checked often
    // enough without a host round trip per sample.
    const double est = std::max(compute_stats(criterion.samples()).median * per_sample_launches, 1e-7);
    batch = std::clamp<std::size_t>(static_cast<std::size_t>(kBatchSeconds / est), 1, kMaxBatch);
    if (fixed) batch = std::min(fixed_count - std::min(fixed_count, criterion.samples().size()), kMaxBatch);
    if (batch == 0) break;
  }
  const std::optional<double> energy1 = sensors ? sensors->energy_mj() : std::nullopt;
  if (sampler) {
    const double sensors_to = sampler->now();
    sampler->stop();
    t.sensors = sensor_summary(*sampler, *sensors, sensors_from, energy0, energy1, sensors_to - sensors_from);
  }
  t.clocks = clock_stats(probes.read_mhz(), device_max_clock_mhz(), settings.throttle);
  finish(t, criterion, settings, t0);
  return t;
}

Timing time_cpu(const std::function<void()>& run, const MeasureSettings& settings) {
  Timing t;
  t.mode = "host";
  const auto t0 = Clock::now();
  {
    NvtxRange warmup_range("warmup", NvtxPhase::warmup);
    for (int i = 0; i < settings.warmup; ++i) run();
  }
  NvtxRange timed_range("timed", NvtxPhase::timed);
  StoppingCriterion criterion(settings);
  for (;;) {
    const auto s0 = Clock::now();
    run();
    criterion.add(seconds_since(s0));
    if (criterion.finished(seconds_since(t0), &t.stop_reason)) break;
  }
  finish(t, criterion, settings, t0);
  return t;
}

}  // namespace harness
