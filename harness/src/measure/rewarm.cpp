#include "measure/rewarm.hpp"

#include <algorithm>
#include <chrono>

#include "harness/cuda_check.hpp"

namespace harness {

namespace {
constexpr double kMinRewarm = 0.5;  // seconds: the limiter's reaction takes hundreds of ms
constexpr double kMaxRewarm = 3.0;  // seconds: settled clocks took 2.1-2.5 s on an H100
constexpr int kLaunchesPerSync = 4;
}  // namespace

double rewarm_seconds(const Timing& timing) {
  if (!timing.steady) return 0;
  if (!timing.steady->reached) return kMaxRewarm;
  return std::clamp(timing.steady->seconds, kMinRewarm, kMaxRewarm);
}

int rewarm(const std::function<void()>& launch, const std::function<void()>& before, cudaStream_t stream,
           double seconds) {
  if (seconds <= 0) return 0;
  const auto start = std::chrono::steady_clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
  int launches = 0;
  while (elapsed() < seconds) {
    for (int i = 0; i < kLaunchesPerSync; ++i, ++launches) {
      if (before) before();
      launch();
    }
    HARNESS_CUDA(cudaGetLastError());
    HARNESS_CUDA(cudaStreamSynchronize(stream));
  }
  return launches;
}

}  // namespace harness
