#include "report/report_model.hpp"

#include <algorithm>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "harness/error.hpp"
#include "report/google_benchmark.hpp"
#include "report/json_get.hpp"
#include "profile/device_peaks.hpp"
#include "report/merge_align.hpp"
#include "report/report.hpp"

namespace harness {

bool Report::is_harness_report() const { return format == kReportSchema; }

namespace {

// NVML's sensors said the clock fell (types/sensors.hpp): counted, its limiting reasons kept.
void clock_fell(const Result& r, std::size_t& fell, std::set<std::string>& reasons) {
  if (!r.timing || !r.timing->sensors || !r.timing->sensors->clock_fell()) return;
  ++fell;
  for (const auto& name : r.timing->sensors->reasons)
    if (is_limiting_reason(name)) reasons.insert(name);
}

using nlohmann::json;
using namespace json_get;

Environment environment_from_json(const json& env) {
  Environment e;
  if (!env.is_object()) return e;
  e.raw = env;
  e.date = str(env, {"date"});
  e.host = str(env, {"host"});
  e.cpu = str(env, {"cpu"});
  e.cuda_driver = str(env, {"cuda_driver"});
  e.cuda_runtime = str(env, {"cuda_runtime"});
  e.harness_version = str(env, {"harness_version"});
  e.git_commit = str(env, {"git_commit"});
  e.command_line = str(env, {"command_line"});
  e.gpu_unavailable_reason = str(env, {"gpu_unavailable_reason"});
  e.cpu_threads = num_or(env, {"cpu_threads"});
  if (const json* g = at(env, {"gpu"}); g && g->is_object()) {
    GpuInfo gpu;
    gpu.name = str(*g, {"name"});
    gpu.compute_capability = str(*g, {"compute_capability"});
    gpu.sm_count = num_or(*g, {"sm_count"});
    gpu.memory_gib = num_or(*g, {"memory_gib"});
    gpu.sm_clock_max_mhz = num_or(*g, {"sm_clock_max_mhz"});
    gpu.memory_clock_mhz = num_or(*g, {"memory_clock_mhz"});
    e.gpu = gpu;
  }
  // "device_peaks" as `harness run` writes them, or "peaks"; unavailable ones are absent.
  for (const char* key : {"device_peaks", "peaks"}) {
    const json* p = at(env, {key});
    if (!p || !p->is_object()) continue;
    ReportPeaks peaks{num_or(*p, {"dram_gbytes_per_s"}), num_or(*p, {"fp32_gflops"}), {}};
    if (const json* t = at(*p, {"tensor"}); t && t->is_object())
      for (const auto& [name, v] : t->items())
        if (v.is_object() && v.contains("gflops") && v["gflops"].is_number() && v["gflops"].get<double>() > 0)
          peaks.tensor_gflops.emplace_back(name, v["gflops"].get<double>());
    if (peaks.dram_gbytes_per_s > 0 || peaks.fp32_gflops > 0) {
      e.peaks = peaks;
      break;
    }
  }
  return e;
}

SuiteInfo suite_from_json(const json& suite) {
  SuiteInfo s;
  s.name = str(suite, {"name"});
  s.file = str(suite, {"file"});
  s.description = str(suite, {"description"});
  s.cases = num(suite, {"cases"});
  // An empty object (reports converted from other tools) states no settings.
  if (const json* st = at(suite, {"settings"}); st && st->is_object() && !st->empty())
    s.settings = settings_from_json(*st);
  return s;
}

Report decode_harness(const json& j, const std::string& path) {
  Report rep;
  rep.path = path;
  rep.format = kReportSchema;
  const double version = num_or(j, {"schema_version"}, 1);
  rep.schema_version = version >= 0 && version < 1e6 ? static_cast<int>(version) : 0;
  if (const json* env = at(j, {"environment"})) rep.environment = environment_from_json(*env);
  if (const json* suite = at(j, {"suite"})) rep.suite = suite_from_json(*suite);
  std::size_t index = 0, throttled = 0;
  std::size_t fell = 0;
  std::set<std::string> reasons;  // the limiting reasons seen, for the warning
  for (const auto& r : j["results"]) {
    const std::size_t i = index++;
    if (!r.is_object()) {
      rep.errors.push_back(fmt::format("results[{}] is not an object", i));
      continue;
    }
    try {
      rep.results.push_back(result_from_json(r));
    } catch (const json::exception&) {
      rep.errors.push_back(fmt::format("results[{}] has neither a name nor problem and variant", i));
      continue;
    }
    throttled += rep.results.back().throttled;
    clock_fell(rep.results.back(), fell, reasons);
  }
  if (throttled)
    rep.warnings.push_back(fmt::format("{}: {} result(s) were measured while the GPU throttled", path, throttled));
  if (fell)
    rep.warnings.push_back(fmt::format("{}: {} result(s) ran with the SM clock fallen (NVML: median under 95% of the maximum{}{})",
                                       path, fell, reasons.empty() ? "" : ", or ", fmt::join(reasons, ", ")));
  return rep;
}

}  // namespace

std::pair<double, std::string> ReportPeaks::compute(const std::string& dtype) const {
  const std::string_view type = peak_dtype(dtype);
  for (const auto& [name, gflops] : tensor_gflops)
    if (name == type) return {gflops, name + " tensor"};
  return {fp32_gflops, "FP32"};
}

Report decode_report(const json& report, const std::string& path) {
  if (!report.is_object()) throw InputError(fmt::format("{}: a report is a JSON object", path));
  if (str_or(report, {"schema"}) == kReportSchema) {
    if (!report.contains("results") || !report["results"].is_array())
      throw InputError(fmt::format("{}: report has no 'results' array", path));
    return decode_harness(report, path);
  }
  if (const json* b = at(report, {"benchmarks"}); b && b->is_array()) {
    Report rep;
    rep.path = path;
    rep.format = kGoogleBenchmarkFormat;
    if (const json* ctx = at(report, {"context"}); ctx && ctx->is_object()) {
      rep.environment.raw = *ctx;
      rep.environment.date = str(*ctx, {"date"});
      rep.environment.host = str(*ctx, {"host_name"});
    }
    rep.results = google_benchmark_results(*b, path);
    return rep;
  }
  throw InputError(fmt::format("{}: neither a harness report nor Google Benchmark JSON", path));
}

Report read_report_model(const std::string& path) { return decode_report(read_report(path), path); }

Report merge_reports(const std::vector<Report>& reports) {
  if (reports.empty()) throw InputError("nothing to merge: no report");
  Report out = reports.front();
  out.merged_from = {out.path};
  std::vector<std::string> suites = {out.suite.name.value_or("?")};
  std::vector<std::size_t> source(out.results.size(), 0);
  for (std::size_t i = 1; i < reports.size(); ++i) {
    const Report& r = reports[i];
    out.results.insert(out.results.end(), r.results.begin(), r.results.end());
    source.resize(out.results.size(), i);
    out.warnings.insert(out.warnings.end(), r.warnings.begin(), r.warnings.end());
    for (const auto& e : r.errors) out.errors.push_back(fmt::format("{}: {}", r.path, e));
    out.merged_from.push_back(r.path);
    const std::string name = r.suite.name.value_or("?");
    if (std::find(suites.begin(), suites.end(), name) == suites.end()) suites.push_back(name);
  }
  out.suite.name = fmt::format("{}", fmt::join(suites, " + "));
  out.path = fmt::format("{}", fmt::join(out.merged_from, " + "));
  out.merge_notes = align_merged_results(out.results, source, out.merged_from);
  // The case count of one suite does not describe the sum.
  if (reports.size() > 1) out.suite.cases.reset();
  if (auto gpus = different_gpus(reports)) out.merge_warnings.push_back(*gpus);
  return out;
}

std::optional<std::string> different_gpus(const std::vector<Report>& reports) {
  std::vector<std::pair<std::string, std::vector<std::string>>> paths_of;  // GPU -> its reports, in order given
  for (const Report& r : reports) {
    const std::string gpu = r.environment.gpu ? r.environment.gpu->name.value_or("an unnamed GPU") : "no GPU";
    auto it = std::find_if(paths_of.begin(), paths_of.end(), [&](const auto& p) { return p.first == gpu; });
    if (it == paths_of.end()) it = paths_of.insert(paths_of.end(), {gpu, {}});
    it->second.push_back(r.path);
  }
  if (paths_of.size() < 2) return std::nullopt;
  std::vector<std::string> parts;
  for (const auto& [gpu, paths] : paths_of) parts.push_back(fmt::format("{} ({})", gpu, fmt::join(paths, ", ")));
  return fmt::format("the reports ran on different GPUs: {}; their timings are not comparable", fmt::join(parts, ", "));
}

}  // namespace harness
