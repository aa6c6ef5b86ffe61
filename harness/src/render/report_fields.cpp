#include "render/report_fields.hpp"

#include <algorithm>
#include <map>
#include <variant>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/units.hpp"
#include "types/settings.hpp"
#include "measure/steady.hpp"
#include "report/json_get.hpp"

namespace harness::fields {

// The report's results, read defensively (a report of an older harness may lack fields).

// Figures of a result as the tables and charts show them.
bool is_timed(const Result& r) {
  return r.status == Status::passed && r.timing && r.timing->stats.median > 0;
}
const Stats& stats_of(const Result& r) {
  static const Stats kNone;
  return r.timing ? r.timing->stats : kNone;
}
double median_s(const Result& r) { return is_timed(r) ? stats_of(r).median : 0; }
double mean_s(const Result& r) { return is_timed(r) ? stats_of(r).mean : 0; }
double min_s(const Result& r) { return is_timed(r) ? stats_of(r).min : 0; }
double max_s(const Result& r) { return is_timed(r) ? stats_of(r).max : 0; }
double stddev_s(const Result& r) { return is_timed(r) ? stats_of(r).stddev : 0; }
double rel_noise(const Result& r) { return is_timed(r) ? stats_of(r).rel_noise : 0; }
bool noise_reached(const Result& r) { return !r.timing || r.timing->noise_reached; }
std::size_t sample_count(const Result& r) {
  if (!r.timing) return 0;
  return r.timing->samples.empty() ? r.timing->stats.count : r.timing->samples.size();
}
double flops_of(const Result& r) { return r.work.flops; }
double bytes_of(const Result& r) { return r.work.bytes; }
double intensity_of(const Result& r) {
  const double stated = is_timed(r) ? r.intensity : 0;
  return stated <= 0 && r.work.flops > 0 && r.work.bytes > 0 ? r.work.flops / r.work.bytes : stated;
}
double gflops_of(const Result& r) {
  if (!is_timed(r)) return 0;
  return r.gflops <= 0 && r.work.flops > 0 ? r.work.flops / median_s(r) / 1e9 : r.gflops;
}
double gbps_of(const Result& r) {
  if (!is_timed(r)) return 0;
  return r.gbytes_per_s <= 0 && r.work.bytes > 0 ? r.work.bytes / median_s(r) / 1e9 : r.gbytes_per_s;
}
double io_bytes(const Result& r) { return static_cast<double>(r.io_device_bytes); }
double ws_bytes(const Result& r) { return static_cast<double>(r.workspace_peak_bytes); }
std::string status_text(const Result& r) { return std::string(to_string(r.status)); }
std::optional<bool> check_passed(const Result& r) {
  return r.check ? std::optional<bool>(r.check->passed) : std::nullopt;
}
bool oom(const Result& r) { return r.reason.rfind("out of memory", 0) == 0; }

// A parameter as JSON (null when the result does not have it).
json pv(const Result& r, const std::string& name) {
  if (!r.params.has(name)) return nullptr;
  return std::visit([](const auto& x) { return json(x); }, r.params.at(name));
}

// In the problem's declared order (the decoder keeps it).
std::vector<std::string> param_order_of(const Result& r) {
  std::vector<std::string> out;
  for (const auto& [n, v] : r.params.entries()) out.push_back(n);
  return out;
}

std::vector<std::string> problems_of(const std::vector<Result>& rows) {
  std::vector<std::string> out;
  for (const auto& r : rows)
    if (std::find(out.begin(), out.end(), r.problem) == out.end()) out.push_back(r.problem);
  return out;
}

std::vector<const Result*> rows_of(const std::vector<Result>& rows, const std::string& problem) {
  std::vector<const Result*> out;
  for (const auto& r : rows)
    if (r.problem == problem) out.push_back(&r);
  return out;
}

std::vector<std::string> param_names(const std::vector<const Result*>& rows) {
  std::vector<std::string> out;
  for (const Result* r : rows)
    for (const auto& k : param_order_of(*r))
      if (std::find(out.begin(), out.end(), k) == out.end()) out.push_back(k);
  return out;
}

// Splits a problem's parameters into those that vary (table columns) and those with one
// value in every row (said once, above the table).

ParamSplit split_params(const std::vector<const Result*>& prow) {
  ParamSplit split;
  for (const auto& n : param_names(prow)) {
    bool same = prow.size() > 1;
    // The first row need not have every parameter; 1 and 1.0 count as one value.
    const json first = pv(*prow.front(), n);
    for (const Result* r : prow)
      if (first.is_null() || !r->params.has(n) || pv(*r, n) != first) same = false;
    (same ? split.fixed : split.columns).push_back(n);
  }
  return split;
}


std::string param_text(const json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number()) return format_number(v.get<double>());
  if (v.is_boolean()) return v.get<bool>() ? "true" : "false";
  if (v.is_null()) return "";
  return v.dump();
}


std::string fixed_text(const Result& any, const std::vector<std::string>& fixed) {
  std::vector<std::string> parts;
  for (const auto& n : fixed) parts.push_back(fmt::format("{}={}", n, param_text(pv(any, n))));
  return fmt::format("{}", fmt::join(parts, ", "));
}

std::string summary_line(const std::vector<Result>& rows) {
  std::map<std::string, int> n;
  for (const auto& r : rows) ++n[status_text(r)];
  std::string s = fmt::format("{} results: {} passed, {} failed, {} skipped, {} errors", rows.size(), n["passed"],
                              n["failed"], n["skipped"], n["error"]);
  for (const auto& [status, count] : n)
    if (status != "passed" && status != "failed" && status != "skipped" && status != "error")
      s += fmt::format(", {} {}", count, status);
  return s;
}

// The environment as (label, value) lines, shared by markdown and HTML.
std::vector<std::pair<std::string, std::string>> environment_lines(const Report& report) {
  std::vector<std::pair<std::string, std::string>> out;
  const Environment& env = report.environment;
  const SuiteInfo& suite = report.suite;
  std::string s = suite.name.value_or("?");
  if (!suite.file.value_or("").empty()) s += fmt::format(" ({})", *suite.file);
  if (suite.cases) s += fmt::format(", {} cases", format_number(*suite.cases));
  out.emplace_back("Suite", s);
  if (report.merged_from.size() > 1)
    out.emplace_back("Reports", fmt::format("{} merged: {}", report.merged_from.size(), fmt::join(report.merged_from, ", ")));
  if (!report.merge_notes.empty())  // engine-only settings the other side does not have
    out.emplace_back("Not paired on", fmt::format("{}", fmt::join(report.merge_notes, "; ")));
  for (const auto& w : report.merge_warnings) out.emplace_back("Warning", w);
  out.emplace_back("Date", env.date.value_or("?"));
  if (const auto& g = env.gpu) {
    std::string gpu = g->name.value_or("?");
    std::vector<std::string> details;
    if (g->sm_count > 0) details.push_back(fmt::format("{} SMs", format_number(g->sm_count)));
    if (!g->compute_capability.value_or("").empty()) details.push_back("cc " + *g->compute_capability);
    if (g->memory_gib > 0) details.push_back(fmt::format("{:.0f} GiB", g->memory_gib));
    if (g->sm_clock_max_mhz > 0) details.push_back(fmt::format("SM clock up to {} MHz", format_number(g->sm_clock_max_mhz)));
    if (g->memory_clock_mhz > 0) details.push_back(fmt::format("memory clock {} MHz", format_number(g->memory_clock_mhz)));
    if (!details.empty()) gpu += fmt::format(" ({})", fmt::join(details, ", "));
    out.emplace_back("GPU", gpu);
  } else {
    const std::string why = env.gpu_unavailable_reason.value_or("");
    out.emplace_back("GPU", why.empty() ? "none" : "none: " + why);
  }
  if (const auto& p = env.peaks) {
    std::vector<std::string> parts;
    if (p->dram_gbytes_per_s > 0) parts.push_back(fmt::format("{} GB/s DRAM", format_figure(p->dram_gbytes_per_s)));
    // TFLOP/s above 1000 GFLOP/s (issue 34: "972566 GFLOP/s bf16 tensor" was unreadable)
    if (p->fp32_gflops > 0) parts.push_back(fmt::format("{} FP32", format_rate(p->fp32_gflops)));
    for (const auto& [name, gflops] : p->tensor_gflops) parts.push_back(fmt::format("{} {} tensor", format_rate(gflops), name));
    if (!parts.empty()) out.emplace_back("Device peaks", fmt::format("{}", fmt::join(parts, ", ")));
  }
  out.emplace_back("CUDA", fmt::format("driver {}, runtime {}", env.cuda_driver.value_or("?"), env.cuda_runtime.value_or("?")));
  std::string host = env.host.value_or("?");
  if (!env.cpu.value_or("").empty()) host += ": " + *env.cpu;
  if (env.cpu_threads > 0) host += fmt::format(", {} threads", format_number(env.cpu_threads));
  out.emplace_back("Host", host);
  out.emplace_back("Harness", fmt::format("{}, commit {}", env.harness_version.value_or("?"), env.git_commit.value_or("?")));
  if (!env.command_line.value_or("").empty()) out.emplace_back("Command", *env.command_line);
  // Issue 33: whether clocks, power and energy come from NVML (reports before it say nothing).
  if (const auto* nvml = json_get::at(env.raw, {"nvml"}); nvml && nvml->is_object())
    out.emplace_back("Sensors", json_get::boolean(*nvml, {"used"}).value_or(false)
                                    ? std::string("NVML (SM clock, power, temperature, throttle reasons, energy)")
                                    : json_get::str_or(*nvml, {"note"}, "NVML: not used"));
  if (const auto& st = suite.settings) {
    const std::vector<std::string> parts = {
        "cache " + std::string(to_string(st->cache)), fmt::format("warm-up {}", st->warmup),
        fmt::format("at least {} samples and {} s", st->min_samples, format_number(st->min_time)),
        fmt::format("at most {} s", format_number(st->max_time)), fmt::format("noise target {}%", format_number(st->noise * 100))};
    out.emplace_back("Settings", fmt::format("{}", fmt::join(parts, ", ")));
  }
  return out;
}

// The cells of a result row in the tables (markdown and HTML), after the parameters.

std::optional<PeakShare> peak_share(const Result& r, const std::optional<ReportPeaks>& peaks) {
  if (!peaks || r.backend != "cuda" || !is_timed(r) || peaks->dram_gbytes_per_s <= 0) return std::nullopt;
  const auto [compute, pipe] = peaks->compute(dtype_param(r.params));
  if (compute <= 0 || (flops_of(r) <= 0 && bytes_of(r) <= 0)) return std::nullopt;
  // Ridge: the intensity at which the DRAM roof meets the compute roof.
  const bool memory = flops_of(r) <= 0 || (bytes_of(r) > 0 && intensity_of(r) < compute / peaks->dram_gbytes_per_s);
  if (memory) return PeakShare{100.0 * gbps_of(r) / peaks->dram_gbytes_per_s, "memory", "DRAM"};
  return PeakShare{100.0 * gflops_of(r) / compute, "compute", pipe};
}

Cells cells_of(const Result& r, const std::optional<ReportPeaks>& peaks) {
  Cells c;
  c.status = status_text(r);
  c.median = is_timed(r) ? format_seconds(median_s(r)) : "-";
  c.noise = !is_timed(r) ? "-" : stats_of(r).has_noise() ? fmt::format("{:.1f}%", rel_noise(r) * 100) : "n/a";
  c.gflops = is_timed(r) && flops_of(r) > 0 ? format_figure(gflops_of(r)) : "-";
  c.gbps = is_timed(r) && bytes_of(r) > 0 ? format_figure(gbps_of(r)) : "-";
  const auto share = peak_share(r, peaks);
  c.peak = share ? fmt::format("{:.0f}% {}", share->pct, share->roof) : "-";
  c.memory = ws_bytes(r) > 0 ? format_bytes(ws_bytes(r)) : "-";
  std::vector<std::string> notes;
  if (!r.config.empty()) notes.push_back("config: " + r.config);
  if (!r.reason.empty()) notes.push_back(r.reason);
  // Issue 33's marks lead the note: the figures of the row are not to be trusted.
  if (r.integrity.outside) notes.insert(notes.begin(), "work outside the timed region: " + *r.integrity.outside);
  if (r.integrity.suspicious) notes.insert(notes.begin(), "suspicious: " + *r.integrity.suspicious);
  if (is_timed(r) && !noise_reached(r)) notes.push_back(stats_of(r).has_noise() ? "noise target not reached" : "one sample: noise not known");
  // The limits that slowed the clock (power, thermal); informational bits such as
  // applications_clocks, set on some machines all the time, stay in the JSON only.
  if (is_timed(r) && r.timing->sensors) {
    std::vector<std::string> limits;
    for (const auto& name : r.timing->sensors->reasons)
      if (is_limiting_reason(name)) limits.push_back(name);
    if (!limits.empty()) notes.push_back(fmt::format("{}", fmt::join(limits, ", ")));
  }
  if (is_timed(r) && r.timing->steady) notes.push_back(steady_text(*r.timing->steady));
  c.note = fmt::format("{}", fmt::join(notes, "; "));
  return c;
}

const char* const kTableHead[8] = {"status", "median", "noise", "GFLOP/s", "GB/s", "% of peak", "extra memory", "note"};

bool has_sensors(const Result& r) { return is_timed(r) && r.timing->sensors.has_value(); }

bool any_sensors(const std::vector<const Result*>& rows) {
  return std::any_of(rows.begin(), rows.end(), [](const Result* r) { return has_sensors(*r); });
}

SensorCells sensor_cells_of(const Result& r) {
  SensorCells c{"-", "-", "-", "-"};
  if (!has_sensors(r)) return c;
  const SensorStats& s = *r.timing->sensors;
  if (s.sm_mhz_median > 0)
    c.clock = s.sm_mhz_limit > 0 ? fmt::format("{:.0f} ({:.0f}%)", s.sm_mhz_median, 100 * s.sm_mhz_median / s.sm_mhz_limit)
                                 : fmt::format("{:.0f}", s.sm_mhz_median);
  if (s.power_w_median > 0) c.power = fmt::format("{:.0f}", s.power_w_median);
  if (r.energy_per_launch_j > 0) c.energy = format_energy(r.energy_per_launch_j);
  if (r.flop_per_j > 0) c.flop_per_j = format_figure(r.flop_per_j * 1e-9);
  return c;
}

const char* const kSensorHead[4] = {"SM clock MHz", "power W", "energy/launch", "GFLOP/J"};

}  // namespace harness::fields
