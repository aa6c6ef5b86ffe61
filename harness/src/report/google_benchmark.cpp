#include "report/google_benchmark.hpp"

#include <map>
#include <optional>

#include <fmt/format.h>

#include "harness/error.hpp"
#include "measure/stats.hpp"
#include "report/json_get.hpp"

namespace harness {

namespace {

double unit_seconds(const std::string& unit, const std::string& path, const std::string& name) {
  if (unit.empty() || unit == "ns") return 1e-9;
  if (unit == "us") return 1e-6;
  if (unit == "ms") return 1e-3;
  if (unit == "s") return 1;
  throw InputError(fmt::format("{}: benchmark '{}': unknown time_unit '{}'", path, name, unit));
}

struct Group {
  std::vector<double> iterations;
  std::optional<double> agg_median, agg_mean;
  std::string error;
};

}  // namespace

std::vector<Result> google_benchmark_results(const nlohmann::json& benchmarks, const std::string& path) {
  using json_get::str_or;
  std::vector<std::string> order;
  std::map<std::string, Group> groups;
  std::size_t index = 0;
  for (const auto& b : benchmarks) {
    const std::size_t i = index++;
    if (!b.is_object()) throw InputError(fmt::format("{}: benchmarks[{}] is not an object", path, i));
    const std::string name = str_or(b, {"name"});
    const std::string run_name = str_or(b, {"run_name"}, name);
    if (run_name.empty()) throw InputError(fmt::format("{}: benchmarks[{}] has no name", path, i));
    if (!groups.count(run_name)) order.push_back(run_name);
    Group& g = groups[run_name];
    if (json_get::boolean(b, {"error_occurred"}).value_or(false) || json_get::boolean(b, {"skipped"}).value_or(false)) {
      g.error = str_or(b, {"error_message"}, str_or(b, {"skip_message"}, "error"));
      continue;
    }
    const auto real_time = json_get::num(b, {"real_time"});
    if (!real_time) throw InputError(fmt::format("{}: benchmark '{}' has no numeric real_time", path, name));
    const double t = *real_time * unit_seconds(str_or(b, {"time_unit"}, "ns"), path, name);
    if (str_or(b, {"run_type"}, "iteration") == "aggregate") {
      const std::string agg = str_or(b, {"aggregate_name"});
      if (agg == "median") g.agg_median = t;
      if (agg == "mean") g.agg_mean = t;
    } else {
      g.iterations.push_back(t);
    }
  }
  std::vector<Result> out;
  for (const auto& run_name : order) {
    const Group& g = groups[run_name];
    Result r;
    r.name = run_name;
    r.problem = run_name.substr(0, run_name.find('/'));
    if (!g.error.empty()) {
      r.status = Status::error;
      r.reason = g.error;
    } else if (!g.iterations.empty()) {
      r.status = Status::passed;
      Timing t;
      t.samples = g.iterations;
      t.stats = compute_stats(t.samples);
      t.noise_reached = true;
      r.timing = t;
    } else if (g.agg_median || g.agg_mean) {
      r.status = Status::passed;
      Timing t;  // no samples: the aggregate is the median
      t.stats.median = g.agg_median ? *g.agg_median : *g.agg_mean;
      t.noise_reached = true;
      r.timing = t;
    } else {
      r.status = Status::skipped;
      r.reason = "no timing";
    }
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace harness
