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
#include "measure/event_pool.hpp"
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
  return e.seconds(0);
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
    for (std::size_t i = 0; i < batch; ++i) out[i] = events.seconds(i) / launches_per_sample;
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

// wall_s: this result's own measuring time, warm-up included (interleaved, the other
// variants' batches are not counted).
void finish_timing(Timing& t, const StoppingCriterion& criterion, const MeasureSettings& settings, double wall_s) {
  t.samples = criterion.samples();
  t.stats = compute_stats(t.samples);
  t.noise_reached = t.stats.has_noise() && t.stats.rel_noise <= settings.noise;
  t.stopping_rule = std::string(to_string(settings.stopping.rule));
  t.wall_time = wall_s;
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

namespace {

// time_cuda, one batch at a time. The constructor warms up (and captures the graph, and
// warms up until steady); step() times one batch; finish() summarizes.
class CudaTiming final : public BatchedTiming {
 public:
  CudaTiming(std::function<void()> launch, cudaStream_t stream, const MeasureSettings& settings, L2Flusher* flusher,
             SensorSource* sensors)
      : launch_(std::move(launch)), stream_(stream), settings_(settings), sensors_(sensors), criterion_(settings_) {
    t_.mode = "events";
    const bool cold = flusher && settings_.cache == CacheMode::cold;
    // From the warm-up on: steady: true reads the clock while it warms up.
    if (sensors_) sampler_ = std::make_unique<SensorSampler>(*sensors_, kSensorPeriod);
    {
      NvtxRange warmup_range("warmup", NvtxPhase::warmup);
      for (int i = 0; i < settings_.warmup; ++i) {
        if (cold) flusher->flush(stream_);
        launch_();
      }
      HARNESS_CUDA(cudaStreamSynchronize(stream_));
    }
    make_graph();
    probes_.capacity = 4096;
    HARNESS_CUDA(cudaMalloc(reinterpret_cast<void**>(&probes_.d), probes_.capacity * 2 * sizeof(unsigned long long)));
    timer_.reset(new BatchTimer{launch_, stream_, cold ? flusher : nullptr, graph_.get(), probes_,
                                static_cast<double>(t_.launches_per_sample), {}});
    // A collective never settles here: its launches are fixed (every rank the same count).
    const bool steady = settings_.steady.value_or(false) && !settings_.fixed_launches;
    if (steady) t_.steady = settle(*timer_, sampler_.get(), settings_.steady_settings);
    // With steady, max_time counts from the first timed sample, not from the warm-up.
    setup_s_ = seconds_since(t0_);
    elapsed_ = steady ? 0 : setup_s_;
    sensors_from_ = sampler_ ? sampler_->now() : 0;
    energy0_ = sensors_ ? sensors_->energy_mj() : std::nullopt;
    // The first batch of one sample estimates the run time. With fixed launches (a
    // collective) the batches are fixed too: stopping.samples samples in batches of
    // kMaxBatch, so that the number of launches does not depend on the timings.
    fixed_count_ = static_cast<std::size_t>(std::max(settings_.stopping.samples, 1));
    batch_ = settings_.fixed_launches ? std::min(fixed_count_, kMaxBatch) : 1;
  }

  bool step() override {
    const auto s0 = Clock::now();
    if (sampler_) windows_.emplace_back(sampler_->now(), 0.0);
    for (double s : timer_->run(batch_)) criterion_.add(s);
    if (sampler_) windows_.back().second = sampler_->now();
    // The stopping rule sees this variant's own time only: its steps, bookkeeping
    // included (back to back, that is the wall time since the first sample, as before;
    // interleaved, the other variants' batches in between are not its time).
    const bool done = criterion_.finished(elapsed_ + seconds_since(s0), &t_.stop_reason) || !size_next_batch();
    elapsed_ += seconds_since(s0);
    steps_s_ += seconds_since(s0);
    return done;
  }

  double median_so_far() const override {
    return criterion_.samples().empty() ? 0.0 : compute_stats(criterion_.samples()).median;
  }

  Timing finish() override {
    const std::optional<double> energy1 = sensors_ ? sensors_->energy_mj() : std::nullopt;
    if (sampler_) {
      const double sensors_to = sampler_->now();
      sampler_->stop();
      t_.sensors = interleaved_ ? own_windows_summary()
                                : sensor_summary(*sampler_, *sensors_, sensors_from_, energy0_, energy1,
                                                 sensors_to - sensors_from_);
    }
    t_.clocks = clock_stats(probes_.read_mhz(), device_max_clock_mhz(), settings_.throttle);
    finish_timing(t_, criterion_, settings_, setup_s_ + steps_s_);
    t_.interleaved = interleaved_;
    return std::move(t_);
  }

 private:
  // Size the next batch to about 50 ms of work, so the stopping rule is checked often
  // enough without a host round trip per sample; false when a fixed count is complete.
  bool size_next_batch() {
    batch_ = batch_launches(compute_stats(criterion_.samples()).median * static_cast<double>(t_.launches_per_sample));
    if (settings_.fixed_launches)
      batch_ = std::min(fixed_count_ - std::min(fixed_count_, criterion_.samples().size()), kMaxBatch);
    return batch_ > 0;
  }

  // Graph mode: k launches per replay, k sized from one timed launch.
  void make_graph() {
    if (settings_.timing != TimingMode::graph) return;
    const double one = std::max(time_one(launch_, stream_), 1e-7);
    const std::size_t k = std::clamp<std::size_t>(static_cast<std::size_t>(kGraphReplaySeconds / one), 1, kMaxGraphLaunches);
    try {
      graph_ = std::make_unique<LaunchGraph>(launch_, stream_, k);
      t_.mode = "graph";
      t_.launches_per_sample = k;
    } catch (const CudaError& e) {
      if (e.sticky()) throw;
      t_.note = std::string("graph capture failed (") + e.what() + "); timed with events";
    } catch (const std::exception& e) {
      t_.note = std::string("graph capture failed (") + e.what() + "); timed with events";
    }
  }

  // Interleaved: the sensors during this variant's own batches only (the sampler also
  // saw the other variants' batches); energy from the power samples of each batch, since
  // the counter read at the two ends would count the other variants' work too.
  SensorStats own_windows_summary() const {
    std::vector<SensorSample> own;
    double seconds = 0, joules = 0;
    bool any_energy = false;
    const auto all = sampler_->since(sensors_from_);
    for (const auto& [from, to] : windows_) {
      std::vector<SensorSample> in;
      for (const auto& s : all)
        if (s.t_s >= from && s.t_s <= to) in.push_back(s);
      if (const auto j = integrate_power_j(in)) {
        joules += *j;
        any_energy = true;
      }
      own.insert(own.end(), in.begin(), in.end());
      seconds += to - from;
    }
    SensorStats st = summarize_sensors(own, sensors_->max_sm_mhz(), sampler_->period());
    st.seconds = seconds;
    if (any_energy) {
      st.energy_j = joules;
      st.energy_source = "power samples";
    }
    return st;
  }

  const Clock::time_point t0_ = Clock::now();
  std::function<void()> launch_;
  cudaStream_t stream_;
  MeasureSettings settings_;
  SensorSource* sensors_;
  StoppingCriterion criterion_;
  Timing t_;
  std::unique_ptr<SensorSampler> sampler_;
  std::unique_ptr<LaunchGraph> graph_;
  ClockProbes probes_;
  std::unique_ptr<BatchTimer> timer_;
  double setup_s_ = 0, steps_s_ = 0, elapsed_ = 0, sensors_from_ = 0;
  std::optional<double> energy0_;
  std::vector<std::pair<double, double>> windows_;  // this variant's batches, sampler time
  std::size_t fixed_count_ = 1, batch_ = 1;
};

// time_cpu, one sample per step: the host clock around one call.
class HostTiming final : public BatchedTiming {
 public:
  HostTiming(std::function<void()> run, const MeasureSettings& settings)
      : run_(std::move(run)), settings_(settings), criterion_(settings_) {
    t_.mode = "host";
    {
      NvtxRange warmup_range("warmup", NvtxPhase::warmup);
      for (int i = 0; i < settings_.warmup; ++i) run_();
    }
    elapsed_ = seconds_since(t0_);  // max_time counts the warm-up, as it always has
  }
  bool step() override {
    const auto s0 = Clock::now();
    run_();
    criterion_.add(seconds_since(s0));
    // Own time, the check included (measured as CudaTiming::step says).
    const bool done = criterion_.finished(elapsed_ + seconds_since(s0), &t_.stop_reason);
    elapsed_ += seconds_since(s0);
    return done;
  }
  Timing finish() override {
    finish_timing(t_, criterion_, settings_, elapsed_);
    t_.interleaved = interleaved_;
    return std::move(t_);
  }

 private:
  const Clock::time_point t0_ = Clock::now();
  std::function<void()> run_;
  MeasureSettings settings_;
  StoppingCriterion criterion_;
  Timing t_;
  double elapsed_ = 0;
};

}  // namespace

std::size_t batch_launches(double sample_s) {
  return std::clamp<std::size_t>(static_cast<std::size_t>(kBatchSeconds / std::max(sample_s, 1e-7)), 1, kMaxBatch);
}

std::unique_ptr<BatchedTiming> start_cuda(std::function<void()> launch, cudaStream_t stream,
                                          const MeasureSettings& settings, L2Flusher* flusher, SensorSource* sensors) {
  return std::make_unique<CudaTiming>(std::move(launch), stream, settings, flusher, sensors);
}

std::unique_ptr<BatchedTiming> start_cpu(std::function<void()> run, const MeasureSettings& settings) {
  return std::make_unique<HostTiming>(std::move(run), settings);
}

Timing time_cuda(const std::function<void()>& launch, cudaStream_t stream, const MeasureSettings& settings,
                 L2Flusher* flusher, SensorSource* sensors) {
  auto timing = start_cuda(launch, stream, settings, flusher, sensors);
  {
    NvtxRange timed_range("timed", NvtxPhase::timed);
    while (!timing->step()) {
    }
  }
  return timing->finish();
}

Timing time_cpu(const std::function<void()>& run, const MeasureSettings& settings) {
  auto timing = start_cpu(run, settings);
  {
    NvtxRange timed_range("timed", NvtxPhase::timed);
    while (!timing->step()) {
    }
  }
  return timing->finish();
}

}  // namespace harness
