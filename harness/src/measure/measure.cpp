#include "measure/measure.hpp"

#include <algorithm>
#include <chrono>
#include <numeric>

#include "harness/cuda_check.hpp"
#include "profile/nvtx.hpp"

namespace harness {

namespace {
using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}
// More samples than this only cost memory; the statistics do not change.
constexpr std::size_t kMaxSamples = 10000;
}  // namespace

bool should_stop(const std::vector<double>& samples, double elapsed_wall,
                 const MeasureSettings& settings, std::string* reason) {
  auto say = [&](const char* r) {
    if (reason) *reason = r;
    return true;
  };
  if (samples.size() >= kMaxSamples) return say("sample cap");
  const double total = std::accumulate(samples.begin(), samples.end(), 0.0);
  const bool enough = samples.size() >= static_cast<std::size_t>(settings.min_samples) &&
                      total >= settings.min_time;
  if (enough && compute_stats(samples).rel_noise <= settings.noise) return say("converged");
  if (elapsed_wall >= settings.max_time && samples.size() >= 1) return say("time cap");
  return false;
}

namespace {
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
}  // namespace

Timing time_cuda(const std::function<void()>& launch, cudaStream_t stream,
                 const MeasureSettings& settings, L2Flusher* flusher) {
  Timing t;
  const auto t0 = Clock::now();
  {
    NvtxRange warmup_range("warmup", NvtxPhase::warmup);
    for (int i = 0; i < settings.warmup; ++i) {
      if (flusher && settings.cache == CacheMode::cold) flusher->flush(stream);
      launch();
    }
    HARNESS_CUDA(cudaStreamSynchronize(stream));
  }
  NvtxRange timed_range("timed", NvtxPhase::timed);

  EventPool events;
  std::size_t batch = 1;  // the first batch of one sample estimates the run time
  constexpr double kBatchSeconds = 0.05;
  constexpr std::size_t kMaxBatch = 256;
  for (;;) {
    events.reserve(batch);
    for (std::size_t i = 0; i < batch; ++i) {
      if (flusher && settings.cache == CacheMode::cold) flusher->flush(stream);
      HARNESS_CUDA(cudaEventRecord(events.start[i], stream));
      launch();
      HARNESS_CUDA(cudaEventRecord(events.stop[i], stream));
    }
    HARNESS_CUDA(cudaEventSynchronize(events.stop[batch - 1]));
    for (std::size_t i = 0; i < batch; ++i) {
      float ms = 0;
      HARNESS_CUDA(cudaEventElapsedTime(&ms, events.start[i], events.stop[i]));
      t.samples.push_back(static_cast<double>(ms) * 1e-3);
    }
    if (should_stop(t.samples, seconds_since(t0), settings, &t.stop_reason)) break;
    // Size the next batch to about 50 ms of work, so the stopping rule is checked often
    // enough without a host round trip per sample.
    const double est = std::max(compute_stats(t.samples).median, 1e-7);
    batch = std::clamp<std::size_t>(static_cast<std::size_t>(kBatchSeconds / est), 1, kMaxBatch);
  }
  t.stats = compute_stats(t.samples);
  t.noise_reached = t.stats.rel_noise <= settings.noise;
  t.wall_time = seconds_since(t0);
  return t;
}

Timing time_cpu(const std::function<void()>& run, const MeasureSettings& settings) {
  Timing t;
  const auto t0 = Clock::now();
  {
    NvtxRange warmup_range("warmup", NvtxPhase::warmup);
    for (int i = 0; i < settings.warmup; ++i) run();
  }
  NvtxRange timed_range("timed", NvtxPhase::timed);
  for (;;) {
    const auto s0 = Clock::now();
    run();
    t.samples.push_back(seconds_since(s0));
    if (should_stop(t.samples, seconds_since(t0), settings, &t.stop_reason)) break;
  }
  t.stats = compute_stats(t.samples);
  t.noise_reached = t.stats.rel_noise <= settings.noise;
  t.wall_time = seconds_since(t0);
  return t;
}

}  // namespace harness
