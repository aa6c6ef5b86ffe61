#include "measure/traced_round.hpp"

#include <algorithm>

#include "harness/cuda_check.hpp"
#include "measure/event_pool.hpp"
#include "measure/measure.hpp"
#include "measure/stats.hpp"

namespace harness {
namespace {

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return quantile_sorted(v, 0.5);
}

}  // namespace

int traced_round_launches(double sample_s) {
  if (!(sample_s > 0)) return kTracedRoundLaunches;  // no sample to size it from
  return std::max(kTracedRoundLaunches, static_cast<int>(batch_launches(sample_s)));
}

void assign_kernels(TracedLaunches& t, std::vector<KernelRecord> records, const std::vector<std::string>& flush_names) {
  std::erase_if(records, [&](const KernelRecord& r) {
    return std::find(flush_names.begin(), flush_names.end(), r.mangled) != flush_names.end();
  });
  std::sort(records.begin(), records.end(), [](const KernelRecord& a, const KernelRecord& b) { return a.start_ns < b.start_ns; });
  t.kernel_total_s = 0;
  for (const auto& r : records) t.kernel_total_s += r.duration_ns() * 1e-9;
  t.kernel_s.clear();
  if (t.launches <= 0 || records.empty() || records.size() % static_cast<std::size_t>(t.launches) != 0) return;
  const std::size_t per = records.size() / static_cast<std::size_t>(t.launches);
  for (std::size_t i = 0; i < records.size(); i += per) {
    double s = 0;
    for (std::size_t j = i; j < i + per; ++j) s += records[j].duration_ns() * 1e-9;
    t.kernel_s.push_back(s);
  }
}

TracedLaunches trace_launches(const std::function<void()>& launch, const std::function<void()>& before,
                              cudaStream_t stream, int launches, const std::function<void(bool)>& window) {
  TracedLaunches t;
  t.launches = std::max(1, launches);
  if (auto why = KernelTrace::unavailable_reason()) {
    t.unavailable = "kernel trace unavailable: " + *why;
    return t;
  }
  EventPool events;
  events.reserve(static_cast<std::size_t>(t.launches));
  try {
    // The flush's kernel names, from one traced flush alone (nothing to take out when hot).
    std::vector<std::string> flush_names;
    if (before) {
      HARNESS_CUDA(cudaStreamSynchronize(stream));
      KernelTrace f;
      f.start();
      before();
      HARNESS_CUDA(cudaStreamSynchronize(stream));
      for (const auto& r : f.stop()) flush_names.push_back(r.mangled);
    }
    HARNESS_CUDA(cudaStreamSynchronize(stream));
    KernelTrace k;
    k.start();
    if (window) window(true);
    for (int i = 0; i < t.launches; ++i) {  // as a timed batch (measure.cpp's BatchTimer::run)
      if (before) before();
      HARNESS_CUDA(cudaEventRecord(events.start[i], stream));
      launch();
      HARNESS_CUDA(cudaEventRecord(events.stop[i], stream));
    }
    HARNESS_CUDA(cudaGetLastError());
    HARNESS_CUDA(cudaStreamSynchronize(stream));
    if (window) window(false);
    auto records = k.stop();
    for (int i = 0; i < t.launches; ++i) t.event_s.push_back(events.seconds(static_cast<std::size_t>(i)));
    assign_kernels(t, std::move(records), flush_names);
  } catch (const CuptiError& e) {
    t.unavailable = std::string("kernel trace unavailable: ") + e.what();
  }
  return t;
}

nlohmann::json to_json(const TracedLaunches& t) {
  if (t.unavailable) return {{"unavailable", *t.unavailable}};
  nlohmann::json j = {{"launches", t.launches}};
  if (t.event_s.empty()) return j;
  const double event = median_of(t.event_s);
  j["event_median_s"] = event;
  double kernel = 0;
  if (!t.kernel_s.empty()) {
    kernel = median_of(t.kernel_s);
    j["kernel_median_s"] = kernel;
  } else {
    kernel = t.kernel_total_s / t.launches;
    j["kernel_mean_s"] = kernel;
  }
  if (kernel > 0) j["event_over_kernel"] = event / kernel;
  if (t.clock_samples > 0)
    j["clock"] = {{"source", "nvml"}, {"during", "traced launches"}, {"samples", t.clock_samples},
                  {"sm_mhz_median", t.sm_mhz_median}};
  return j;
}

}  // namespace harness
