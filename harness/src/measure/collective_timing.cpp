// time_collective (collective.hpp): the CUDA side of timing a collective as nccl-tests does.
#include <algorithm>
#include <chrono>
#include <vector>

#include "harness/cuda_check.hpp"
#include "measure/clock_probe.hpp"
#include "measure/collective.hpp"
#include "measure/measure.hpp"
#include "measure/stopping.hpp"
#include "profile/nvtx.hpp"

namespace harness {

namespace {
using Clock = std::chrono::steady_clock;

// One start/stop pair for every batch and a device buffer for the clock probes, freed on
// every way out.
struct BatchResources {
  cudaEvent_t start = nullptr, stop = nullptr;
  unsigned long long* probes = nullptr;  // {cycles, ns} per batch
  explicit BatchResources(std::size_t batches) {
    HARNESS_CUDA(cudaEventCreate(&start));
    HARNESS_CUDA(cudaEventCreate(&stop));
    HARNESS_CUDA(cudaMalloc(reinterpret_cast<void**>(&probes), batches * 2 * sizeof(unsigned long long)));
  }
  ~BatchResources() {
    if (start) HARNESS_CUDA_NOTHROW(cudaEventDestroy(start));
    if (stop) HARNESS_CUDA_NOTHROW(cudaEventDestroy(stop));
    if (probes) HARNESS_CUDA_NOTHROW(cudaFree(probes));
  }
  BatchResources(const BatchResources&) = delete;
  BatchResources& operator=(const BatchResources&) = delete;
};

ClockStats read_clocks(const BatchResources& r, std::size_t batches, const MeasureSettings& settings) {
  std::vector<unsigned long long> h(2 * batches);
  HARNESS_CUDA(cudaMemcpy(h.data(), r.probes, h.size() * sizeof(h[0]), cudaMemcpyDeviceToHost));
  std::vector<double> mhz;
  for (std::size_t i = 0; i < batches; ++i)
    if (h[2 * i + 1] > 0) mhz.push_back(static_cast<double>(h[2 * i]) / static_cast<double>(h[2 * i + 1]) * 1e3);
  int device = 0, khz = 0;
  HARNESS_CUDA(cudaGetDevice(&device));
  HARNESS_CUDA(cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, device));
  return clock_stats(std::move(mhz), khz / 1e3, settings.throttle);
}
}  // namespace

Timing time_collective(const std::function<void()>& launch, const std::function<void()>& barrier, cudaStream_t stream,
                       const MeasureSettings& settings, std::size_t ops) {
  Timing t;
  t.mode = "events";
  ops = std::max<std::size_t>(ops, 1);
  t.launches_per_sample = ops;
  const auto t0 = Clock::now();
  {
    // At least one batch's worth, so that NCCL's lazy connections for this size and its
    // first-use costs are paid before the first sample.
    NvtxRange warmup_range("warmup", NvtxPhase::warmup);
    const std::size_t warm = std::max(ops, static_cast<std::size_t>(std::max(settings.warmup, 0)));
    for (std::size_t i = 0; i < warm; ++i) launch();
    HARNESS_CUDA(cudaStreamSynchronize(stream));
  }
  NvtxRange timed_range("timed", NvtxPhase::timed);
  const auto batches = static_cast<std::size_t>(std::max(settings.stopping.samples, 1));
  BatchResources res(batches);
  StoppingCriterion criterion(settings);
  for (std::size_t b = 0; b < batches; ++b) {
    barrier();  // every rank is here and this stream is idle
    HARNESS_CUDA(cudaEventRecord(res.start, stream));
    for (std::size_t i = 0; i < ops; ++i) launch();
    HARNESS_CUDA(cudaEventRecord(res.stop, stream));
    HARNESS_CUDA(clocks::probe(res.probes + 2 * b, stream));  // after the stop event: outside the sample
    HARNESS_CUDA(cudaEventSynchronize(res.stop));
    float ms = 0;
    HARNESS_CUDA(cudaEventElapsedTime(&ms, res.start, res.stop));
    criterion.add(static_cast<double>(ms) * 1e-3 / static_cast<double>(ops));
  }
  HARNESS_CUDA(cudaStreamSynchronize(stream));  // the last probe
  const double elapsed = std::chrono::duration<double>(Clock::now() - t0).count();
  if (!criterion.finished(elapsed, &t.stop_reason)) t.stop_reason = "sample count reached";
  t.clocks = read_clocks(res, batches, settings);
  t.samples = criterion.samples();
  t.stats = compute_stats(t.samples);
  t.noise_reached = t.stats.has_noise() && t.stats.rel_noise <= settings.noise;
  t.stopping_rule = "samples";
  t.wall_time = std::chrono::duration<double>(Clock::now() - t0).count();
  return t;
}

}  // namespace harness
