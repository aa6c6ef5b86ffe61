#pragma once
// How one result is measured: the settings a suite gives (defaults, overridden per case),
// read by the measuring loop and written into every result. A record at the bottom of
// the harness: suite/ fills it, measure/ reads it, report/ writes it.
#include <optional>
#include <string_view>

#include "harness/params.hpp"

namespace harness {

enum class CacheMode { hot, cold };
std::string_view to_string(CacheMode mode);
// events: CUDA events around each launch; graph: a CUDA graph of k launches replayed,
// per-launch time = replay time / k (no launch gaps: for kernels of a few microseconds).
enum class TimingMode { events, graph };
std::string_view to_string(TimingMode mode);

// interleave's order inside each round: shuffled (a fresh permutation of the variants per
// round, seeded by the run's seed and the case: Google Benchmark's random interleaving) or
// fixed (plan order, A B C A B C). In a fixed order each variant always follows the same
// one, so a kernel that leaves the GPU hotter (or cooler) tilts the next one's figure alike
// in every round; a shuffled order spreads that over all of them.
enum class RoundOrder { shuffled, fixed };
std::string_view to_string(RoundOrder order);
std::optional<RoundOrder> round_order_from_string(std::string_view name);

// When to stop taking samples (the rules: measure/stopping.hpp).
enum class StoppingRule { noise, entropy, samples };
std::string_view to_string(StoppingRule rule);
std::optional<StoppingRule> stopping_rule_from_string(std::string_view name);

struct StoppingSettings {
  StoppingRule rule = StoppingRule::noise;
  int samples = 100;         // rule samples: the count
  double max_angle = 0.048;  // rule entropy: degrees
  double min_r2 = 0.36;      // rule entropy
};

// steady: true (measure/settle.hpp): warm up until the SM clock settles, then sample, so
// that a power-capped GPU's result is its sustained figure, not a mix of the first
// (boosted) moments and the capped rest. Settled: the median clock of the last `window`
// seconds is within `tolerance` of the median of the window before, after at least
// `min_time` seconds of warm-up; never past `max_time` (then "not reached").
struct SteadySettings {
  double window = 0.5;      // seconds
  double tolerance = 0.02;  // relative
  double min_time = 1.0;    // seconds
  double max_time = 10.0;   // seconds: the cap
  double burst = 0.2;       // seconds: the first samples that make the burst figure
};

// The default of `steady` for a case whose suite does not say: on for tensor-core work.
// The rule: the case has a parameter `dtype` whose value is bf16, f16, tf32 or an fp8
// type (fp8, e4m3, e5m2, fp8_e4m3, fp8_e5m2); those kernels draw the most power and are the ones a power cap
// slows. Stated in `harness list` and docs/measurement.md.
bool is_tensor_core_dtype(std::string_view dtype);
// A case's `dtype` parameter ("bf16", ...), "" where it has none (or not as text): what
// picks the steady default, the roofline's compute roof and the cheat check's roof.
std::string dtype_param(const Params& params);
bool steady_by_default(const Params& params);
// The default of `interleave`: the same rule as steady's. Measured on an H100 (bf16 GEMMs
// at the 700 W cap, docs/measurement.md): timed one after the other, each kernel ran at its
// own capped clock and wgmma/cuBLAS read 0.95-1.00x; in rounds they shared one power state
// and read 1.03-1.09x, in both repeats, outside each other's 95% intervals. Work that does
// not reach the cap was not seen to move, so it keeps plain timing.
bool interleave_by_default(const Params& params);
inline constexpr std::string_view kInterleaveDefaultRule =
    "interleave (a case's variants timed in rounds, one batch of each per round) is on by default when a case's "
    "dtype is bf16, f16, tf32 or fp8 (tensor cores, power-capped), off otherwise; a suite's settings.interleave "
    "overrides it; each round takes the variants in a fresh seeded order (settings.interleave_order: shuffled, the "
    "default, or fixed)";
inline constexpr std::string_view kSteadyDefaultRule =
    "steady (warm up until the SM clock settles) is on by default when a case's dtype is bf16, f16, tf32 or fp8 "
    "(tensor cores), off otherwise; a suite's settings.steady overrides it";

struct MeasureSettings {
  int warmup = 3;             // untimed runs before the first sample
  int min_samples = 10;
  double min_time = 0.5;      // seconds of samples at least
  double max_time = 5.0;      // seconds: stop here even if noise is above target
  double noise = 0.02;        // target relative noise (stddev / mean)
  CacheMode cache = CacheMode::cold;  // cold: L2 flushed before each sample
  double timeout = 0;         // seconds for the whole case x variant; 0 = none
  TimingMode timing = TimingMode::events;
  StoppingSettings stopping;  // when to stop sampling (measure/stopping.hpp)
  double throttle = 0.75;     // SM clock under this share of the maximum: throttled
  // steady: unset until the suite loader resolves it per case (the dtype rule above).
  std::optional<bool> steady;
  SteadySettings steady_settings;
  // interleave: true (measure/interleave.hpp): a case's variants timed in rounds, one
  // batch of each per round, so that a slow drift (the power cap's clock) falls on all of
  // them alike. Unset until the suite loader resolves it per case (interleave_by_default).
  std::optional<bool> interleave;
  RoundOrder round_order = RoundOrder::shuffled;  // suite key interleave_order
  // Set by the runner for a collective (not a suite key): exactly warmup + stopping.samples
  // launches, whatever the timings, so that every rank launches the same collectives.
  bool fixed_launches = false;
};

}  // namespace harness
