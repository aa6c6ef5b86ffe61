#pragma once
// A suite: YAML in, a validated list of expanded cases out. Every input error surfaces
// here, before any GPU work, as an InputError "file:line:column: message".
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "harness/params.hpp"
#include "harness/problem.hpp"
#include "harness/registry.hpp"
#include "harness/variant.hpp"
#include "measure/stopping.hpp"

namespace harness {

enum class CacheMode { hot, cold };
std::string_view to_string(CacheMode mode);
// events: CUDA events around each launch; graph: a CUDA graph of k launches replayed,
// per-launch time = replay time / k (no launch gaps: for kernels of a few microseconds).
enum class TimingMode { events, graph };
std::string_view to_string(TimingMode mode);

// How one result is measured. Suite defaults, overridden per case.
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
  // Set by the runner for a collective (not a suite key): exactly warmup + stopping.samples
  // launches, whatever the timings, so that every rank launches the same collectives.
  bool fixed_launches = false;
};

struct Case {
  std::string name;               // the suite's case name ("square")
  std::string location;           // "suites/gemm.yaml:12:5"
  const Problem* problem = nullptr;
  Params params;                  // complete: suite values over defaults
  std::vector<const Variant*> variants;
  std::optional<std::string> reference;   // overrides Problem::reference_variant
  std::optional<Tolerance> tolerance;     // overrides Problem::tolerance
  MeasureSettings settings;
  std::vector<std::string> metrics;

  // "gemm/M:4096/N:4096/K:4096" (Google Benchmark's name/arg:value style)
  std::string id() const;
};

struct Suite {
  std::string name;
  std::string file;
  std::string description;
  MeasureSettings settings;
  std::string trace;              // settings.trace: timeline file of the run ("" = none)
  std::vector<std::string> metrics;
  std::vector<Case> cases;
};

Suite load_suite(const std::string& path, const Registry& registry);
// Several suites run as one: each loaded (and validated) in turn, their cases in order,
// named "a+b", with the first suite's settings and the first trace path given.
Suite load_suites(const std::vector<std::string>& paths, const Registry& registry);
Suite parse_suite(std::string_view yaml, const std::string& filename, const Registry& registry);

// Result names: "gemm/tiled/M:4096/N:4096/K:4096".
std::string result_name(const Case& c, const Variant& v);

}  // namespace harness
