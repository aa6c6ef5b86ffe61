// `harness report --format csv`: one row per result (RFC 4180: fields with a comma, quote
// or line break are quoted, quotes doubled), numbers in full precision.
#include <map>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "render/report_fields.hpp"
#include "render/report_render.hpp"
#include "render/report_speedup.hpp"

namespace harness {

using namespace fields;

namespace {
std::string fmt_csv_number(double v) { return fmt::format("{}", v); }

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\r\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char ch : s) {
    if (ch == '"') out += '"';
    out += ch;
  }
  return out + "\"";
}
// The sensor and steady columns: empty where the result has no such figure.
void sensor_fields(const Result& r, std::vector<std::string>& f) {
  const SensorStats* s = has_sensors(r) ? &*r.timing->sensors : nullptr;
  auto positive = [](double v) { return v > 0 ? fmt_csv_number(v) : std::string(); };
  for (double v : {s ? s->sm_mhz_min : 0, s ? s->sm_mhz_median : 0, s ? s->sm_mhz_max : 0, s ? s->power_w_median : 0,
                   s ? s->temp_c_max : 0})
    f.push_back(positive(v));
  f.push_back(s ? fmt::format("{}", fmt::join(s->reasons, " ")) : "");
  for (double v : {r.energy_per_launch_j, r.flop_per_j, r.cycles_per_launch}) f.push_back(is_timed(r) ? positive(v) : "");
  const SteadyState* st = is_timed(r) && r.timing->steady ? &*r.timing->steady : nullptr;
  f.push_back(st ? (st->reached ? "true" : "false") : "");
  f.push_back(st ? positive(st->burst_median_s) : "");
}
}  // namespace

std::string render_report_csv(const Report& report) { return render_report_csv(report, ReportOptions{}); }

std::string render_report_csv(const Report& report, const ReportOptions& options) {
  const std::vector<Result>& rows = report.results;
  // A named --reference adds two columns at the end: the reference variant of the row's
  // problem and the row's speed as a share of it at the same shape (reference median time
  // / this median time), full precision; "" and "none" add nothing.
  const bool with_reference = !options.reference.empty() && options.reference != "none";
  std::map<std::string, std::vector<const Result*>> by_problem;
  for (const auto& r : rows) by_problem[r.problem].push_back(&r);
  std::vector<const Result*> all;
  for (const auto& r : rows) all.push_back(&r);
  const auto names = param_names(all);
  std::vector<std::string> head = {"name", "case", "problem", "variant", "backend"};
  for (const auto& n : names) head.push_back("param." + n);
  for (const char* h : {"status", "reason", "samples", "median_s", "mean_s", "min_s", "max_s", "stddev_s", "rel_noise",
                        "gflops", "gbytes_per_s", "arithmetic_intensity", "flops", "bytes", "io_device_bytes",
                        "workspace_peak_bytes", "check_passed", "max_abs_error", "rel_l2_error", "pct_of_peak", "bound",
                        "roof",
                        // NVML's sensors and the steady warm-up (empty where the result has none)
                        "sm_clock_min_mhz", "sm_clock_median_mhz", "sm_clock_max_mhz", "power_median_w",
                        "temperature_max_c", "throttle_reasons", "energy_per_launch_j", "flop_per_j",
                        "cycles_per_launch", "steady_reached", "burst_median_s"})
    head.emplace_back(h);
  if (with_reference) {
    head.emplace_back("reference");
    head.emplace_back("speedup_vs_reference");
    // its 95% bootstrap interval (render/report_speedup.hpp; empty under 5 samples a side)
    head.emplace_back("speedup_ci95_low");
    head.emplace_back("speedup_ci95_high");
  }
  std::string o;
  auto line = [&](const std::vector<std::string>& fields) {
    for (std::size_t i = 0; i < fields.size(); ++i) {
      if (i) o += ',';
      o += csv_field(fields[i]);
    }
    o += "\n";
  };
  line(head);
  for (const Result& r : rows) {
    std::vector<std::string> f = {r.name, r.case_name, r.problem, r.variant, r.backend};
    for (const auto& n : names) f.push_back(r.params.has(n) ? param_text(pv(r, n)) : "");
    f.push_back(status_text(r));
    f.push_back(r.reason);
    auto timed = [&](double v) { return is_timed(r) ? fmt_csv_number(v) : std::string(); };
    f.push_back(is_timed(r) ? fmt::format("{}", sample_count(r)) : "");
    for (double v : {median_s(r), mean_s(r), min_s(r), max_s(r), stddev_s(r)}) f.push_back(timed(v));
    f.push_back(is_timed(r) && !stats_of(r).has_noise() ? "n/a" : timed(rel_noise(r)));  // one sample: no noise
    for (double v : {gflops_of(r), gbps_of(r)}) f.push_back(timed(v));
    f.push_back(intensity_of(r) > 0 ? fmt_csv_number(intensity_of(r)) : "");
    for (double v : {flops_of(r), bytes_of(r), io_bytes(r), ws_bytes(r)}) f.push_back(fmt_csv_number(v));
    f.push_back(check_passed(r) ? (*check_passed(r) ? "true" : "false") : "");
    f.push_back(check_passed(r) ? fmt_csv_number(r.check->max_abs_error) : "");
    f.push_back(check_passed(r) ? fmt_csv_number(r.check->rel_l2_error) : "");
    const auto peak = peak_share(r, report.environment.peaks);
    f.push_back(peak ? fmt_csv_number(peak->pct) : "");
    f.push_back(peak ? peak->bound : "");
    f.push_back(peak ? peak->roof : "");
    sensor_fields(r, f);
    if (with_reference) {
      const auto& prow = by_problem[r.problem];
      const std::string ref = reference_for(prow, options.reference);
      const auto ratio = reference_ratio(r, prow, ref);
      const bool ci = ratio && ratio->interval;
      f.push_back(ref);
      f.push_back(ratio ? fmt_csv_number(ratio->share) : "");
      f.push_back(ci ? fmt_csv_number(ratio->interval->lo) : "");
      f.push_back(ci ? fmt_csv_number(ratio->interval->hi) : "");
    }
    line(f);
  }
  return o;
}

}  // namespace harness
