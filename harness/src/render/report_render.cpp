#include "render/report_render.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <set>

#include <fmt/format.h>

#include "types/environment.hpp"
#include "harness/error.hpp"
#include "report/report.hpp"
#include "render/report_curves.hpp"
#include "render/report_html.hpp"
#include "report/report_model.hpp"
#include "render/report_speedup.hpp"
#include "render/report_svg.hpp"
#include "render/report_timeline.hpp"

namespace harness {

namespace {

using nlohmann::json;

// ---------------------------------------------------------------------------------------
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
struct ParamSplit {
  std::vector<std::string> columns;
  std::vector<std::string> fixed;
};

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

// ---------------------------------------------------------------------------------------
// Formatting (kept here, not shared with the console, so the golden files stay put).

std::string fmt_num(double v) {
  if (v == std::floor(v) && std::fabs(v) < 1e15) return fmt::format("{}", static_cast<long long>(v));
  return fmt::format("{:g}", v);
}

std::string param_text(const json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number()) return fmt_num(v.get<double>());
  if (v.is_boolean()) return v.get<bool>() ? "true" : "false";
  if (v.is_null()) return "";
  return v.dump();
}


std::string fmt_bytes(double b) {
  if (b >= 1024.0 * 1024 * 1024) return fmt::format("{:.2f} GiB", b / (1024.0 * 1024 * 1024));
  if (b >= 1024.0 * 1024) return fmt::format("{:.1f} MiB", b / (1024.0 * 1024));
  if (b >= 1024.0) return fmt::format("{:.1f} KiB", b / 1024.0);
  return fmt::format("{:.0f} B", b);
}

std::string fmt_3(double v) {
  if (v >= 100) return fmt::format("{:.0f}", v);
  if (v >= 10) return fmt::format("{:.1f}", v);
  return fmt::format("{:.2f}", v);
}

std::string fmt_csv_number(double v) { return fmt::format("{}", v); }

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
  if (suite.cases) s += fmt::format(", {} cases", fmt_num(*suite.cases));
  out.emplace_back("Suite", s);
  if (report.merged_from.size() > 1)
    out.emplace_back("Reports", fmt::format("{} merged: {}", report.merged_from.size(), fmt::join(report.merged_from, ", ")));
  out.emplace_back("Date", env.date.value_or("?"));
  if (const auto& g = env.gpu) {
    std::string gpu = g->name.value_or("?");
    std::vector<std::string> details;
    if (g->sm_count > 0) details.push_back(fmt::format("{} SMs", fmt_num(g->sm_count)));
    if (!g->compute_capability.value_or("").empty()) details.push_back("cc " + *g->compute_capability);
    if (g->memory_gib > 0) details.push_back(fmt::format("{:.0f} GiB", g->memory_gib));
    if (g->sm_clock_max_mhz > 0) details.push_back(fmt::format("SM clock up to {} MHz", fmt_num(g->sm_clock_max_mhz)));
    if (g->memory_clock_mhz > 0) details.push_back(fmt::format("memory clock {} MHz", fmt_num(g->memory_clock_mhz)));
    if (!details.empty()) gpu += fmt::format(" ({})", fmt::join(details, ", "));
    out.emplace_back("GPU", gpu);
  } else {
    const std::string why = env.gpu_unavailable_reason.value_or("");
    out.emplace_back("GPU", why.empty() ? "none" : "none: " + why);
  }
  if (const auto& p = env.peaks) {
    std::vector<std::string> parts;
    if (p->dram_gbytes_per_s > 0) parts.push_back(fmt::format("{} GB/s DRAM", fmt_3(p->dram_gbytes_per_s)));
    if (p->fp32_gflops > 0) parts.push_back(fmt::format("{} GFLOP/s FP32", fmt_3(p->fp32_gflops)));
    if (!parts.empty()) out.emplace_back("Device peaks", fmt::format("{}", fmt::join(parts, ", ")));
  }
  out.emplace_back("CUDA", fmt::format("driver {}, runtime {}", env.cuda_driver.value_or("?"), env.cuda_runtime.value_or("?")));
  std::string host = env.host.value_or("?");
  if (!env.cpu.value_or("").empty()) host += ": " + *env.cpu;
  if (env.cpu_threads > 0) host += fmt::format(", {} threads", fmt_num(env.cpu_threads));
  out.emplace_back("Host", host);
  out.emplace_back("Harness", fmt::format("{}, commit {}", env.harness_version.value_or("?"), env.git_commit.value_or("?")));
  if (!env.command_line.value_or("").empty()) out.emplace_back("Command", *env.command_line);
  if (const auto& st = suite.settings) {
    const std::vector<std::string> parts = {
        "cache " + std::string(to_string(st->cache)), fmt::format("warm-up {}", st->warmup),
        fmt::format("at least {} samples and {} s", st->min_samples, fmt_num(st->min_time)),
        fmt::format("at most {} s", fmt_num(st->max_time)), fmt::format("noise target {}%", fmt_num(st->noise * 100))};
    out.emplace_back("Settings", fmt::format("{}", fmt::join(parts, ", ")));
  }
  return out;
}

// The cells of a result row in the tables (markdown and HTML), after the parameters.
struct Cells {
  std::string status, median, noise, gflops, gbps, memory, note;
};

Cells cells_of(const Result& r) {
  Cells c;
  c.status = status_text(r);
  c.median = is_timed(r) ? html::fmt_seconds(median_s(r)) : "-";
  c.noise = is_timed(r) ? fmt::format("{:.1f}%", rel_noise(r) * 100) : "-";
  c.gflops = is_timed(r) && flops_of(r) > 0 ? fmt_3(gflops_of(r)) : "-";
  c.gbps = is_timed(r) && bytes_of(r) > 0 ? fmt_3(gbps_of(r)) : "-";
  c.memory = ws_bytes(r) > 0 ? fmt_bytes(ws_bytes(r)) : "-";
  std::vector<std::string> notes;
  if (!r.config.empty()) notes.push_back("config: " + r.config);
  if (!r.reason.empty()) notes.push_back(r.reason);
  if (is_timed(r) && !noise_reached(r)) notes.push_back("noise target not reached");
  c.note = fmt::format("{}", fmt::join(notes, "; "));
  return c;
}

const char* const kTableHead[] = {"status", "median", "noise", "GFLOP/s", "GB/s", "extra memory", "note"};

}  // namespace

std::string md_escape(const std::string& s) {
  std::string out;
  for (char ch : s) {
    if (ch == '|') out += "\\|";
    else if (ch == '\n' || ch == '\r') out += ' ';
    else out += ch;
  }
  return out;
}

// ---------------------------------------------------------------------------------------
// Markdown

std::string render_report_markdown(const Report& report) {
  const std::vector<Result>& rows = report.results;
  std::string o;
  o += fmt::format("# harness report: {}\n\n", md_escape(report.suite.name.value_or("?")));
  if (!report.suite.description.value_or("").empty()) o += md_escape(*report.suite.description) + "\n\n";
  o += "| | |\n|---|---|\n";
  for (const auto& [k, v] : environment_lines(report))
    o += fmt::format("| {} | {} |\n", k, k == "Command" ? "`" + md_escape(v) + "`" : md_escape(v));
  o += fmt::format("\n**{}**\n", summary_line(rows));
  for (const auto& problem : problems_of(rows)) {
    const auto prow = rows_of(rows, problem);
    const ParamSplit split = split_params(prow);
    const auto& names = split.columns;
    o += fmt::format("\n## {}\n\n", md_escape(problem));
    if (!split.fixed.empty()) o += fmt::format("Fixed parameters: {}\n\n", md_escape(fixed_text(*prow.front(), split.fixed)));
    o += "| variant |";
    for (const auto& n : names) o += fmt::format(" {} |", md_escape(n));
    for (const char* h : kTableHead) o += fmt::format(" {} |", h);
    o += "\n|---|";
    for (const auto& n : names) {
      bool numeric = true;
      for (const Result* r : prow)
        if (r->params.has(n) && !pv(*r, n).is_number()) numeric = false;
      o += numeric ? "---:|" : "---|";
    }
    o += "---|---:|---:|---:|---:|---:|---|\n";
    for (const Result* r : prow) {
      const Cells c = cells_of(*r);
      o += fmt::format("| {} |", md_escape(r->variant));
      for (const auto& n : names)
        o += fmt::format(" {} |", r->params.has(n) ? md_escape(param_text(pv(*r, n))) : "");
      o += fmt::format(" {} | {} | {} | {} | {} | {} | {} |\n", c.status, c.median, c.noise, c.gflops, c.gbps, c.memory,
                       md_escape(c.note));
    }
    o += curve_tables_markdown(prow);
  }
  return o;
}

// ---------------------------------------------------------------------------------------
// CSV (RFC 4180: fields with a comma, quote or line break are quoted, quotes doubled)

namespace {
std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\r\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char ch : s) {
    if (ch == '"') out += '"';
    out += ch;
  }
  return out + "\"";
}
}  // namespace

std::string render_report_csv(const Report& report) {
  const std::vector<Result>& rows = report.results;
  std::vector<const Result*> all;
  for (const auto& r : rows) all.push_back(&r);
  const auto names = param_names(all);
  std::vector<std::string> head = {"name", "case", "problem", "variant", "backend"};
  for (const auto& n : names) head.push_back("param." + n);
  for (const char* h : {"status", "reason", "samples", "median_s", "mean_s", "min_s", "max_s", "stddev_s", "rel_noise",
                        "gflops", "gbytes_per_s", "arithmetic_intensity", "flops", "bytes", "io_device_bytes",
                        "workspace_peak_bytes", "check_passed", "max_abs_error", "rel_l2_error"})
    head.emplace_back(h);
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
    for (double v : {median_s(r), mean_s(r), min_s(r), max_s(r), stddev_s(r), rel_noise(r), gflops_of(r), gbps_of(r)}) f.push_back(timed(v));
    f.push_back(intensity_of(r) > 0 ? fmt_csv_number(intensity_of(r)) : "");
    for (double v : {flops_of(r), bytes_of(r), io_bytes(r), ws_bytes(r)}) f.push_back(fmt_csv_number(v));
    f.push_back(check_passed(r) ? (*check_passed(r) ? "true" : "false") : "");
    f.push_back(check_passed(r) ? fmt_csv_number(r.check->max_abs_error) : "");
    f.push_back(check_passed(r) ? fmt_csv_number(r.check->rel_l2_error) : "");
    line(f);
  }
  return o;
}

// ---------------------------------------------------------------------------------------
// HTML

namespace {

using svg::escape;

// Which numeric parameter to put on the x axis of a problem's charts, and how the rows
// fall into series.
struct Layout {
  bool ok = false;
  std::string x;                   // parameter name
  std::string x_label;             // "M = N = K"
  std::vector<std::string> series_params;  // parameters that split series (besides the variant)
};

bool numeric_param(const std::vector<const Result*>& rows, const std::string& name) {
  bool any = false;
  for (const Result* r : rows) {
    if (!r->params.has(name)) continue;
    if (!pv(*r, name).is_number()) return false;
    any = true;
  }
  return any;
}

std::size_t distinct(const std::vector<const Result*>& rows, const std::string& name) {
  std::set<std::string> v;
  for (const Result* r : rows)
    if (r->params.has(name)) v.insert(pv(*r, name).dump());
  return v.size();
}

Layout choose_layout(const std::vector<const Result*>& rows, const std::vector<std::string>& prefer, bool prefer_first) {
  Layout l;
  const auto names = param_names(rows);
  std::vector<std::string> numeric;
  for (const auto& n : names)
    if (numeric_param(rows, n)) numeric.push_back(n);
  if (numeric.empty()) return l;
  auto rank = [&](const std::string& n) {
    auto it = std::find(prefer.begin(), prefer.end(), n);
    return it == prefer.end() ? prefer.size() : static_cast<std::size_t>(it - prefer.begin());
  };
  std::string best;
  if (prefer_first)
    for (const auto& p : prefer)
      if (std::find(numeric.begin(), numeric.end(), p) != numeric.end() && distinct(rows, p) > 1) {
        best = p;
        break;
      }
  if (best.empty()) {
    best = numeric.front();
    for (const auto& n : numeric) {
      const std::size_t dn = distinct(rows, n), db = distinct(rows, best);
      if (dn > db || (dn == db && rank(n) < rank(best))) best = n;
    }
  }
  l.ok = true;
  l.x = best;
  std::vector<std::string> same = {best};
  for (const auto& n : names) {
    if (n == best) continue;
    bool equal = numeric_param(rows, n), determined = true, varies = distinct(rows, n) > 1;
    std::map<std::string, std::string> by_x;
    for (const Result* r : rows) {
      const std::string xv = r->params.has(best) ? pv(*r, best).dump() : "";
      const std::string v = r->params.has(n) ? pv(*r, n).dump() : "";
      if (xv != v) equal = false;
      auto [it, inserted] = by_x.emplace(xv, v);
      if (!inserted && it->second != v) determined = false;
    }
    if (equal && varies) same.push_back(n);
    else if (varies && !determined) l.series_params.push_back(n);
  }
  // Keep the declared order in "M = N = K".
  std::vector<std::string> ordered;
  for (const auto& n : names)
    if (std::find(same.begin(), same.end(), n) != same.end()) ordered.push_back(n);
  l.x_label = fmt::format("{}", fmt::join(ordered, " = "));
  return l;
}

std::string series_key(const Result& r, const Layout& l) {
  std::string key = r.variant;
  for (const auto& n : l.series_params)
    if (r.params.has(n)) key += fmt::format(" {}={}", n, param_text(pv(r, n)));
  return key;
}

std::string describe(const Result& r) {
  std::string s = r.problem + "/" + r.variant;
  for (const auto& k : param_order_of(r)) s += fmt::format(" {}={}", k, param_text(pv(r, k)));
  return s;
}

// Index of the series with this label, added when new.
std::size_t series_index(std::vector<svg::Series>& series, const std::string& label) {
  for (std::size_t i = 0; i < series.size(); ++i)
    if (series[i].label == label) return i;
  series.push_back({label, {}, true, {}});
  return series.size() - 1;
}

void x_axis(svg::Axis& axis, const std::vector<double>& xs, const std::string& label) {
  axis.label = label;
  double lo = 0, hi = 0;
  if (!xs.empty()) {
    lo = *std::min_element(xs.begin(), xs.end());
    hi = *std::max_element(xs.begin(), xs.end());
  }
  axis.log = lo > 0 && hi / lo >= 4;
  std::size_t pow2 = 0;
  bool integers = true;
  for (double x : xs) {
    if (x != std::floor(x)) integers = false;
    if (x >= 1 && std::exp2(std::round(std::log2(x))) == x) ++pow2;
  }
  axis.ticks = integers && pow2 * 2 >= xs.size() && !xs.empty() ? svg::TickStyle::binary : svg::TickStyle::decimal;
}

void y_axis(svg::Axis& axis, const std::vector<double>& ys, const std::string& label, double log_above) {
  axis.label = label;
  double lo = 0, hi = 0;
  if (!ys.empty()) {
    lo = *std::min_element(ys.begin(), ys.end());
    hi = *std::max_element(ys.begin(), ys.end());
  }
  axis.log = lo > 0 && hi / lo >= log_above;
  axis.from_zero = !axis.log;
}

// The unit of a size parameter, for axis labels ("" when unknown).
std::string param_unit(const std::string& name) {
  static const std::map<std::string, std::string> kUnits = {
      {"n", "elements"}, {"N", "elements"}, {"M", "elements"}, {"K", "elements"}, {"size", "elements"},
      {"seq_len", "tokens"}, {"batch", "sequences"}, {"heads", "heads"}, {"head_dim", "elements"},
      {"kv_heads", "heads"}, {"d_model", "elements"}, {"layers", "layers"}};
  const auto it = kUnits.find(name);
  return it == kUnits.end() ? "" : it->second;
}

std::string with_unit(const std::string& label, const std::string& param) {
  const std::string u = param_unit(param);
  return u.empty() ? label : fmt::format("{} ({})", label, u);
}

std::string throughput_chart(const std::string& problem, const std::vector<const Result*>& prow, std::size_t index,
                             svg::ColorMap& colors) {
  std::vector<const Result*> timed;
  for (const Result* r : prow)
    if (is_timed(*r)) timed.push_back(r);
  if (timed.empty()) {
    std::map<std::string, int> n;
    for (const Result* r : prow) ++n[status_text(*r)];
    return fmt::format("<p class=\"nochart\">No timed result for <b>{}</b> ({} skipped, {} failed, {} errors): "
                       "nothing to plot.</p>\n",
                       escape(problem), n["skipped"], n["failed"], n["error"]);
  }
  const Layout l = choose_layout(prow, {"n", "N", "seq_len", "size", "M", "K", "batch"}, false);
  if (!l.ok)
    return fmt::format("<p class=\"nochart\"><b>{}</b> has no numeric parameter to plot against.</p>\n",
                       escape(problem));
  // Metric: GFLOP/s when every timed result does FLOPs, GB/s when every one moves bytes,
  // else the median time.
  bool all_flops = true, all_bytes = true;
  double tmax = 0;
  for (const Result* r : timed) {
    all_flops = all_flops && flops_of(*r) > 0;
    all_bytes = all_bytes && bytes_of(*r) > 0;
    tmax = std::max(tmax, median_s(*r));
  }
  std::string unit = "s";
  double scale = 1;
  if (tmax < 1e-3) unit = "us", scale = 1e6;
  else if (tmax < 1) unit = "ms", scale = 1e3;
  svg::Chart c;
  c.id = fmt::format("throughput-{}", index);
  std::string metric;
  if (all_flops) metric = "GFLOP/s";
  else if (all_bytes) metric = "GB/s";
  else metric = "median time";
  // One series per variant and value of the other varying parameters reads well for a
  // sweep of one size; a suite of unrelated shapes (square, odd, tall-skinny, K=1 ...)
  // would make dozens of two-point lines. Then the x axis is the work of one run and
  // every variant is one series.
  std::set<std::string> keys;
  for (const Result* r : timed) keys.insert(series_key(*r, l));
  constexpr std::size_t kMaxSeries = 12;
  const bool by_work = keys.size() > kMaxSeries && (all_flops || all_bytes);
  const std::string x_label = by_work ? (all_flops ? "work per run (GFLOP)" : "bytes per run (GB)") : with_unit(l.x_label, l.x);
  c.title = fmt::format("{}: {} against {}", problem, metric, by_work ? std::string(all_flops ? "work per run" : "bytes per run") : l.x_label);
  c.subtitle = all_flops || all_bytes ? fmt::format("{} at the median time of each result; higher is better", metric)
                                      : "median time of each result; lower is better";
  if (by_work) c.subtitle += "; one point per shape, one series per variant";
  std::vector<double> xs, ys;
  for (const Result* r : timed) {
    if (!by_work && !r->params.has(l.x)) continue;
    const double x = by_work ? (all_flops ? flops_of(*r) : bytes_of(*r)) * 1e-9 : pv(*r, l.x).get<double>();
    const double y = all_flops ? gflops_of(*r) : all_bytes ? gbps_of(*r) : median_s(*r) * scale;
    const std::size_t si = series_index(c.series, by_work ? r->variant : series_key(*r, l));
    c.series[si].color = colors(r->variant);
    const std::string value = all_flops ? fmt::format("{} GFLOP/s", fmt_3(y))
                              : all_bytes ? fmt::format("{} GB/s", fmt_3(y))
                                          : html::fmt_seconds(median_s(*r));
    c.series[si].points.push_back({x, y, fmt::format("{}: {} (median {}, {} samples)", describe(*r), value,
                                                     html::fmt_seconds(median_s(*r)), sample_count(*r))});
    if (by_work) c.series[si].line = false;
    xs.push_back(x);
    ys.push_back(y);
  }
  x_axis(c.x, xs, x_label);
  y_axis(c.y, ys, all_flops || all_bytes ? metric : fmt::format("median time ({})", unit),
         all_flops || all_bytes ? 50 : 20);
  return svg::render(c);
}

std::string roofline_chart(const Report& report, const std::vector<Result>& rows, std::string& note,
                           svg::ColorMap& colors) {
  double peak_bw = 0, peak_flops = 0;
  bool have_peaks = false;
  if (const auto& p = report.environment.peaks) {
    peak_bw = p->dram_gbytes_per_s;
    peak_flops = p->fp32_gflops;
    have_peaks = peak_bw > 0 || peak_flops > 0;
  }
  std::string source = "device peak";
  if (!have_peaks) {
    source = "best measured";
    for (const auto& r : rows) {
      if (!is_timed(r)) continue;
      if (bytes_of(r) > 0) peak_bw = std::max(peak_bw, gbps_of(r));
      if (flops_of(r) > 0) peak_flops = std::max(peak_flops, gflops_of(r));
    }
  }
  svg::Chart c;
  c.id = "roofline";
  c.title = "Roofline";
  std::vector<std::string> parts;
  if (peak_bw > 0) parts.push_back(fmt::format("{} GB/s", fmt_3(peak_bw)));
  if (peak_flops > 0) parts.push_back(fmt::format("{} GFLOP/s", fmt_3(peak_flops)));
  c.subtitle = have_peaks ? fmt::format("roof: the device peaks measured at run start, {} (FP32)", fmt::join(parts, ", "))
                          : fmt::format("roof: the best results of this report, {} (the report states no device peaks)",
                                        fmt::join(parts, ", "));
  c.x.label = "arithmetic intensity (FLOP/byte)";
  c.y.label = "GFLOP/s";
  c.x.log = c.y.log = true;
  std::size_t not_shown = 0;
  double xlo = std::numeric_limits<double>::infinity(), xhi = 0;
  for (const auto& r : rows) {
    if (!is_timed(r)) continue;
    if (!(flops_of(r) > 0 && bytes_of(r) > 0 && intensity_of(r) > 0 && gflops_of(r) > 0)) {
      ++not_shown;
      continue;
    }
    const std::size_t si = series_index(c.series, r.problem + "/" + r.variant);
    c.series[si].line = false;
    c.series[si].color = colors(r.variant);
    const double roof = peak_bw > 0 && peak_flops > 0 ? std::min(peak_flops, peak_bw * intensity_of(r))
                        : peak_flops > 0               ? peak_flops
                                                       : peak_bw * intensity_of(r);
    c.series[si].points.push_back({intensity_of(r), gflops_of(r),
                                   fmt::format("{}: {} GFLOP/s at {} FLOP/byte ({:.0f}% of the roof)", describe(r),
                                               fmt_3(gflops_of(r)), fmt_3(intensity_of(r)),
                                               roof > 0 ? 100 * gflops_of(r) / roof : 0.0)});
    xlo = std::min(xlo, intensity_of(r));
    xhi = std::max(xhi, intensity_of(r));
  }
  if (!(xhi > 0)) {
    note = not_shown ? fmt::format("No timed result has both FLOPs and bytes ({} without): no roofline to draw.",
                                   not_shown)
                     : "No timed result: no roofline to draw.";
    return "";
  }
  auto roof_at = [&](double x) {
    if (peak_bw > 0 && peak_flops > 0) return std::min(peak_flops, peak_bw * x);
    return peak_flops > 0 ? peak_flops : peak_bw * x;
  };
  if (peak_bw > 0 || peak_flops > 0) {
    // The axes cover the points and the ridge (and the flat roof); the roof itself
    // runs from far left to far right and is clipped to the plot.
    svg::RefLine range{"", {}, "none", true};
    if (peak_bw > 0 && peak_flops > 0) range.points.emplace_back(peak_flops / peak_bw, peak_flops);
    else range.points.emplace_back(xlo, roof_at(xlo));
    c.refs.push_back(range);
    svg::RefLine roof;
    roof.label = have_peaks ? "roof (device peaks)" : "roof (best measured)";
    roof.sets_range = false;
    const double far_lo = std::min(xlo, range.points[0].first) / 1e6, far_hi = std::max(xhi, range.points[0].first) * 1e6;
    roof.points.emplace_back(far_lo, roof_at(far_lo));
    if (peak_bw > 0 && peak_flops > 0) roof.points.emplace_back(peak_flops / peak_bw, peak_flops);
    roof.points.emplace_back(far_hi, roof_at(far_hi));
    c.refs.push_back(roof);
  }
  if (not_shown)
    note = fmt::format("{} timed result(s) without FLOPs (or bytes) have no arithmetic intensity and are not shown.",
                       not_shown);
  return svg::render(c);
}

// The numeric parameter that drives a problem's extra memory: the one that, together
// with the variant, determines the workspace best (fewest (variant, value) groups with
// two different workspaces), then the one with more distinct values, then `prefer`'s order.
std::string memory_driver(const std::vector<const Result*>& used, const std::vector<std::string>& prefer) {
  std::string best;
  std::size_t best_ambiguous = 0, best_distinct = 0;
  for (const auto& n : param_names(used)) {
    if (!numeric_param(used, n) || distinct(used, n) < 2) continue;
    std::map<std::string, std::set<double>> groups;
    for (const Result* r : used)
      if (r->params.has(n)) groups[r->variant + "\x1f" + pv(*r, n).dump()].insert(ws_bytes(*r));
    std::size_t ambiguous = 0;
    for (const auto& [k, v] : groups) ambiguous += v.size() > 1;
    const std::size_t d = distinct(used, n);
    auto rank = [&](const std::string& x) { return std::find(prefer.begin(), prefer.end(), x) - prefer.begin(); };
    if (best.empty() || ambiguous < best_ambiguous || (ambiguous == best_ambiguous && d > best_distinct) ||
        (ambiguous == best_ambiguous && d == best_distinct && rank(n) < rank(best))) {
      best = n;
      best_ambiguous = ambiguous;
      best_distinct = d;
    }
  }
  return best;
}

std::string memory_charts(const std::vector<Result>& rows, svg::ColorMap& colors) {
  std::string o, notes;
  std::size_t index = 0;
  for (const auto& problem : problems_of(rows)) {
    const auto prow = rows_of(rows, problem);
    std::vector<const Result*> used;
    std::set<double> values;
    bool any_oom = false;
    for (const Result* r : prow) {
      if (ws_bytes(*r) > 0 || oom(*r)) used.push_back(r);
      if (ws_bytes(*r) > 0) values.insert(ws_bytes(*r));
      any_oom = any_oom || oom(*r);
    }
    if (used.empty()) continue;
    if (values.size() <= 1 && !any_oom) {
      // One value everywhere (cuBLAS's fixed workspace): a flat line says nothing.
      std::set<std::string> vs;
      for (const Result* r : used) vs.insert(r->variant);
      notes += fmt::format("<p class=\"note\">{}: every result that used extra device memory used the same {} ({}); "
                           "no chart.</p>\n",
                           escape(problem), fmt_bytes(*values.begin()), escape(fmt::format("{}", fmt::join(vs, ", "))));
      continue;
    }
    const std::string x = memory_driver(used, {"seq_len", "N", "n", "S", "L", "M", "K", "batch"});
    if (x.empty()) continue;
    double wmax = 0;
    for (const Result* r : used) wmax = std::max(wmax, ws_bytes(*r));
    std::string unit = "B";
    double div = 1;
    if (wmax >= 1024.0 * 1024 * 1024) unit = "GiB", div = 1024.0 * 1024 * 1024;
    else if (wmax >= 1024.0 * 1024) unit = "MiB", div = 1024.0 * 1024;
    else if (wmax >= 1024.0) unit = "KiB", div = 1024.0;
    svg::Chart c;
    c.id = fmt::format("memory-{}", index++);
    c.title = fmt::format("{}: extra device memory against {}", problem, x);
    c.subtitle = "peak workspace each variant allocated beyond inputs and outputs; x at the top: skipped, out of memory";
    c.edge_marker_label = "out of memory (skipped)";
    std::vector<double> xs, ys;
    std::map<std::string, std::map<std::string, std::set<double>>> per_x;  // variant -> x -> values
    for (const Result* r : used) {
      if (!r->params.has(x)) continue;
      const double xv = pv(*r, x).get<double>();
      const std::size_t si = series_index(c.series, r->variant);
      c.series[si].color = colors(r->variant);
      if (oom(*r)) {
        c.edge_markers.push_back({xv, si, fmt::format("{}: {}", describe(*r), r->reason)});
        xs.push_back(xv);
        continue;
      }
      c.series[si].points.push_back(
          {xv, ws_bytes(*r) / div, fmt::format("{}: {} extra", describe(*r), fmt_bytes(ws_bytes(*r)))});
      per_x[r->variant][pv(*r, x).dump()].insert(ws_bytes(*r));
      xs.push_back(xv);
      ys.push_back(ws_bytes(*r) / div);
    }
    // A variant whose workspace other parameters also change gets points, not a line.
    for (auto& series : c.series)
      for (const auto& [xv, set] : per_x[series.label])
        if (set.size() > 1) series.line = false;
    x_axis(c.x, xs, with_unit(x, x));
    y_axis(c.y, ys, fmt::format("extra device memory ({})", unit), 16);
    if (c.y.log) {  // decades of sizes: bytes on the axis, labelled 256 KiB, 1 MiB, ...
      c.y.ticks = svg::TickStyle::bytes;
      c.y.label = "extra device memory (bytes)";
      for (auto& series : c.series)
        for (auto& p : series.points) p.y *= div;
    }
    o += svg::render(c);
  }
  if (o.empty() && notes.empty())
    o = "<p class=\"nochart\">No result used extra device memory (workspace_peak_bytes is 0 everywhere) and none "
        "ran out of memory: no memory chart.</p>\n";
  return o + notes;
}

std::string html_table(const std::vector<const Result*>& prow) {
  const ParamSplit split = split_params(prow);
  const auto& names = split.columns;
  std::string o;
  if (!split.fixed.empty())
    o += fmt::format("<p>Fixed parameters: {}</p>\n", escape(fixed_text(*prow.front(), split.fixed)));
  o += "<table class=\"results\">\n<thead><tr><th>variant</th>";
  for (const auto& n : names) o += fmt::format("<th>{}</th>", escape(n));
  for (const char* h : kTableHead) o += fmt::format("<th>{}</th>", h);
  o += "</tr></thead>\n<tbody>\n";
  for (const Result* r : prow) {
    const Cells c = cells_of(*r);
    o += fmt::format("<tr class=\"{}\"><td>{}</td>", escape(status_text(*r)), escape(r->variant));
    for (const auto& n : names)
      o += fmt::format("<td class=\"num\">{}</td>", r->params.has(n) ? escape(param_text(pv(*r, n))) : "");
    o += fmt::format(
        "<td class=\"status\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>"
        "<td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"note\">{}</td></tr>\n",
        escape(c.status), escape(c.median), escape(c.noise), escape(c.gflops), escape(c.gbps), escape(c.memory),
        escape(c.note));
  }
  return o + "</tbody>\n</table>\n";
}

}  // namespace

std::string render_report_html(const Report& report) { return render_report_html(report, ReportOptions{}); }

std::string render_report_html(const Report& report, const ReportOptions& options) {
  const std::vector<Result>& rows = report.results;
  svg::ColorMap colors;  // one color per variant on every chart of the page
  const std::string suite = report.suite.name.value_or("?");
  std::string o;
  o += "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  // Nothing may be fetched: the file is the whole report.
  o += "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">\n";
  o += fmt::format("<title>harness report: {}</title>\n<style>{}</style>\n</head>\n<body>\n", escape(suite), html::stylesheet());
  o += fmt::format("<h1>harness report: {}</h1>\n", escape(suite));
  if (!report.suite.description.value_or("").empty())
    o += fmt::format("<p>{}</p>\n", escape(*report.suite.description));
  o += "<table class=\"env\">\n";
  for (const auto& [k, v] : environment_lines(report))
    o += fmt::format("<tr><th>{}</th><td>{}</td></tr>\n", escape(k), escape(v));
  o += "</table>\n";
  o += fmt::format("<p class=\"summary\">{}</p>\n", escape(summary_line(rows)));
  // Variants get their colors in report order, whichever chart comes first.
  for (const auto& r : rows) (void)colors(r.variant);
  // Per-step series (loss curves); no section when no result has one.
  const std::string curves = curve_section_html(rows, colors);
  o += fmt::format("<nav><a href=\"#speedup\">Speedup</a><a href=\"#throughput\">Throughput</a>{}"
                   "<a href=\"#roofline-section\">Roofline</a><a href=\"#memory\">Memory</a><a href=\"#results\">Results</a>"
                   "<a href=\"#timelines\">Kernel timelines</a></nav>\n",
                   curves.empty() ? "" : "<a href=\"#curves\">Curves</a>");

  o += "<h2 id=\"speedup\">Speed relative to the reference</h2>\n";
  o += speedup_section_html(report, options.reference, colors);

  o += "<h2 id=\"throughput\">Throughput</h2>\n";
  std::size_t index = 0;
  for (const auto& problem : problems_of(rows)) o += throughput_chart(problem, rows_of(rows, problem), index++, colors);
  if (rows.empty()) o += "<p class=\"nochart\">The report has no results.</p>\n";

  o += curves;

  o += "<h2 id=\"roofline-section\">Roofline</h2>\n";
  std::string note;
  o += roofline_chart(report, rows, note, colors);
  if (!note.empty()) o += fmt::format("<p class=\"note\">{}</p>\n", escape(note));

  o += "<h2 id=\"memory\">Memory</h2>\n";
  o += memory_charts(rows, colors);

  o += "<h2 id=\"results\">Results</h2>\n";
  for (const auto& problem : problems_of(rows)) {
    o += fmt::format("<h3>{}</h3>\n", escape(problem));
    o += html_table(rows_of(rows, problem));
  }
  o += "<h2 id=\"timelines\">Kernel timelines</h2>\n";
  o += kernel_timelines_html(report);
  o += fmt::format("<footer>Rendered by harness {} from a report written by harness {} (schema {} version {}); "
                   "hover over a point for its details.</footer>\n",
                   escape(harness_version()), escape(report.environment.harness_version.value_or("?")),
                   escape(report.format), report.schema_version);
  o += "</body>\n</html>\n";
  return o;
}

std::string render_report(const Report& report, const std::string& format) {
  return render_report(report, format, ReportOptions{});
}

std::string render_report(const Report& report, const std::string& format, const ReportOptions& options) {
  if (!report.is_harness_report())
    throw InputError("not a harness report (Google Benchmark JSON has no results to render)");
  if (format == "md") return render_report_markdown(report);
  if (format == "csv") return render_report_csv(report);
  if (format == "html") return render_report_html(report, options);
  throw InputError(fmt::format("unknown report format '{}' (md, csv or html)", format));
}

}  // namespace harness
