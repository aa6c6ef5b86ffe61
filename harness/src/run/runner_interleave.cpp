// interleave: true (measure/interleave.hpp says why): the variants of one case checked
// one after the other as always, then timed in rounds, one batch of each per round, then
// each finished (status, re-check on fresh inputs, rates, profiling) in plan order.
// Checks, re-checks, profiling and the steady warm-up stay per variant: only the timed
// batches are interleaved. With one variant left to time (the others skipped or failed
// their check) it is plain timing. Collectives never come here.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include <fmt/format.h>

#include "core/fnv1a.hpp"
#include "harness/cuda_check.hpp"
#include "measure/interleave.hpp"
#include "measure/sensors.hpp"
#include "profile/nvtx.hpp"
#include "measure/traced_round.hpp"
#include "run/runner_case.hpp"

namespace harness {

bool Runner::interleaves(const CaseState& state, const std::vector<const Variant*>& variants) const {
  const Case& c = state.c;
  return c.settings.interleave.value_or(false) && variants.size() >= 2 && !c.problem->collective_at(c.params) &&
         !options_.check_only && !state.reference_problem;
}

std::unique_ptr<BatchedTiming> Runner::start_timing(const Case& c, const Variant& v, LaunchContext& ctx) {
  if (v.backend != Backend::cuda) return start_cpu([&v, &ctx] { v.launch(ctx); }, c.settings);
  return start_cuda([&v, &ctx] { v.launch(ctx); }, stream_, c.settings, flusher_.get(), sensors_.get());
}

namespace {

// The seed of a case's round order: the run's seed mixed with the case's first timed result
// name (FNV-1a), so that a rerun with the same --seed takes the same orders and two cases
// do not share one.
std::uint64_t round_seed(std::uint64_t run_seed, const std::string& name) {
  return fnv1a64(name) ^ (run_seed * 0x9E3779B97F4A7C15ull);
}

// One variant on its way through the interleaved case.
struct Slot {
  const Variant* v = nullptr;
  Result r;
  Workspace ws;
  std::optional<LaunchContext> ctx;
  std::unique_ptr<BatchedTiming> timing;  // set while it is being timed
};

}  // namespace

void Runner::run_case_interleaved(CaseState& state, const std::vector<const Variant*>& variants,
                                  std::vector<Result>& out, const RunObserver& observer, std::size_t& index,
                                  std::size_t total) {
  const Case& c = state.c;
  std::vector<std::unique_ptr<Slot>> slots;
  const std::size_t first_index = index + 1;
  // 1. Check each variant and warm it up (steady: until its clock settles), in plan order.
  for (const Variant* v : variants) {
    auto& s = *slots.emplace_back(std::make_unique<Slot>());
    s.v = v;
    s.r = base_result(c, *v);
    s.r.reference = state.reference_name;
    if (observer.on_start) observer.on_start(s.r.name, ++index, total);
    NvtxRange variant_range(nvtx_variant_name(c.problem->name(), v->name, c.params), NvtxPhase::variant);
    if (auto why = skip_reason(c, *v)) {
      s.r.status = Status::skipped;
      s.r.reason = *why;
      continue;
    }
    guarded(s.r, [&] {
      if (prepare_and_check(state, *v, s.ws, s.ctx, s.r)) s.timing = start_timing(c, *v, *s.ctx);
    });
    if (s.r.status == Status::crashed) break;  // no later variant starts (as in run_case)
  }
  // 2. The timed batches in rounds: A B C A B C ... (shuffled: C A B B C A ...)
  std::vector<Slot*> timed;
  for (auto& s : slots)
    if (s->timing) timed.push_back(s.get());
  const bool interleaved = timed.size() >= 2;
  if (interleaved)
    for (Slot* s : timed) s->timing->set_interleaved();
  std::vector<std::size_t> rounds;
  std::optional<std::uint64_t> shuffle;
  if (interleaved && c.settings.round_order == RoundOrder::shuffled)
    shuffle = round_seed(options_.seed, timed[0]->r.name);
  {
    NvtxRange timed_range("timed", NvtxPhase::timed);
    rounds = run_in_rounds(timed.size(), [&](std::size_t i) {
      bool done = true, ok = false;
      guarded(timed[i]->r, [&] {
        done = timed[i]->timing->step();
        ok = true;
      });
      if (ok) return done;
      timed[i]->timing.reset();  // a batch failed: guarded() recorded why in its result
      return true;
    }, shuffle);
  }
  // 2b. One more round, traced, while the GPU is still in the rounds' power state: the
  // trust check of results timed in rounds (measure/traced_round.hpp says why). Profiled
  // runs only, events timing (what a round's batch is), CUDA variants. Each variant's
  // traced batch is as long as its batches in the rounds, with NVML's clock over it.
  std::vector<nlohmann::json> traced(timed.size());
  if (interleaved && options_.profile && c.settings.timing == TimingMode::events) {
    NvtxRange traced_range("traced round", NvtxPhase::profile);
    const std::function<void()> before = flush_before_each(c);
    for (std::size_t i = 0; i < timed.size(); ++i) {
      Slot& s = *timed[i];
      if (!s.timing || s.v->backend != Backend::cuda) continue;
      bool ok = false;
      guarded(s.r, [&] {
        std::unique_ptr<SensorSampler> sampler;
        if (sensors_) sampler = std::make_unique<SensorSampler>(*sensors_, kProfileSensorPeriod);
        double from = 0, to = 0;
        auto window = [&](bool begin) {
          if (sampler) (begin ? from : to) = sampler->now();
        };
        TracedLaunches t = trace_launches([&s] { s.v->launch(*s.ctx); }, before, stream_,
                                          traced_round_launches(s.timing->median_so_far()), window);
        if (sampler) {
          sampler->stop();
          std::vector<SensorSample> in = sampler->since(from);
          std::erase_if(in, [&](const SensorSample& x) { return x.t_s > to || !(x.sm_mhz > 0); });  // clock readings only
          const SensorStats st = summarize_sensors(in, 0, sampler->period());
          if (in.size() >= kTracedRoundMinClockReadings && st.sm_mhz_median > 0)
            t.sm_mhz_median = st.sm_mhz_median, t.clock_samples = in.size();
        }
        traced[i] = to_json(t);
        ok = true;
      });
      if (!ok) s.timing.reset();  // guarded() recorded why in its result
    }
  }
  // 3. Each timed variant finished as run_variant finishes it.
  for (std::size_t i = 0; i < timed.size(); ++i) {
    Slot& s = *timed[i];
    if (!s.timing) continue;
    NvtxRange variant_range(nvtx_variant_name(c.problem->name(), s.v->name, c.params), NvtxPhase::variant);
    guarded(s.r, [&] {
      s.r.timing = s.timing->finish();
      if (interleaved) s.r.timing->rounds = rounds[i];
      if (s.v->backend == Backend::cuda) HARNESS_CUDA(cudaGetLastError());
      after_timing(state, *s.v, s.ws, *s.ctx, s.r);
      if (!traced[i].is_null() && s.r.profile.is_object()) s.r.profile["traced_round"] = traced[i];
    });
    s.timing.reset();
  }
  // 4. The results in plan order.
  for (std::size_t k = 0; k < slots.size(); ++k) {
    auto& s = slots[k];
    if (observer.on_result) observer.on_result(s->r, first_index + k, total);
    const bool crashed = s->r.status == Status::crashed;
    out.push_back(std::move(s->r));
    if (crashed) break;  // the context is gone: the caller ends the run (or a fresh child goes on)
  }
}

}  // namespace harness
