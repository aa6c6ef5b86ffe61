#include "report/report_render.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <set>

#include <fmt/format.h>

#include "run/environment.hpp"
#include "harness/error.hpp"
#include "report/report.hpp"
#include "report/report_svg.hpp"

namespace harness {

namespace {

using nlohmann::json;

// ---------------------------------------------------------------------------------------
// The report's results, read defensively (a report of an older harness may lack fields).

struct Row {
  std::string name, case_name, problem, variant, backend, status, reason;
  json params = json::object();
  std::vector<std::string> param_order;  // as the result name lists them
  bool timed = false;
  std::size_t samples = 0;
  double median = 0, mean = 0, min = 0, max = 0, stddev = 0, rel_noise = 0;
  bool noise_reached = true;
  double gflops = 0, gbps = 0, intensity = 0, flops = 0, bytes = 0;
  double io_bytes = 0, ws_bytes = 0;
  std::optional<bool> check_passed;
  double max_abs_error = 0, rel_l2_error = 0;
  bool oom() const { return reason.rfind("out of memory", 0) == 0; }
};

const json* at(const json& j, std::initializer_list<const char*> keys) {
  const json* p = &j;
  for (const char* k : keys) {
    if (!p->is_object()) return nullptr;
    auto it = p->find(k);
    if (it == p->end()) return nullptr;
    p = &*it;
  }
  return p;
}

double num(const json& j, std::initializer_list<const char*> keys, double fallback = 0) {
  const json* p = at(j, keys);
  return p && p->is_number() ? p->get<double>() : fallback;
}

std::string str(const json& j, std::initializer_list<const char*> keys, const std::string& fallback = "") {
  const json* p = at(j, keys);
  return p && p->is_string() ? p->get<std::string>() : fallback;
}

// The device peaks of the environment: "device_peaks" as `harness run` writes them, or
// "peaks"; null when absent or unavailable.
const json* device_peaks(const json& env) {
  for (const char* key : {"device_peaks", "peaks"})
    if (const json* p = at(env, {key}); p && p->is_object() && (num(*p, {"dram_gbytes_per_s"}) > 0 || num(*p, {"fp32_gflops"}) > 0))
      return p;
  return nullptr;
}

std::vector<Row> read_rows(const json& report) {
  std::vector<Row> rows;
  const json* results = at(report, {"results"});
  if (!results || !results->is_array()) return rows;
  for (const auto& r : *results) {
    if (!r.is_object()) continue;
    Row row;
    row.name = str(r, {"name"});
    row.case_name = str(r, {"case"});
    row.problem = str(r, {"problem"}, "?");
    row.variant = str(r, {"variant"}, "?");
    row.backend = str(r, {"backend"});
    row.status = str(r, {"status"}, "error");
    row.reason = str(r, {"reason"});
    if (const json* p = at(r, {"params"}); p && p->is_object()) row.params = *p;
    // The result name lists the parameters in the problem's declared order
    // ("gemm/tiled/M:4096/N:4096/K:4096"); the JSON object sorts them.
    std::size_t pos = 0, seg = 0;
    while (pos <= row.name.size()) {
      std::size_t end = row.name.find('/', pos);
      if (end == std::string::npos) end = row.name.size();
      if (seg >= 2) {
        const std::string part = row.name.substr(pos, end - pos);
        const std::string key = part.substr(0, part.find(':'));
        if (row.params.contains(key) &&
            std::find(row.param_order.begin(), row.param_order.end(), key) == row.param_order.end())
          row.param_order.push_back(key);
      }
      ++seg;
      pos = end + 1;
    }
    for (const auto& [k, v] : row.params.items())
      if (std::find(row.param_order.begin(), row.param_order.end(), k) == row.param_order.end())
        row.param_order.push_back(k);
    if (row.name.empty()) row.name = row.problem + "/" + row.variant;
    const json* stats = at(r, {"stats"});
    row.timed = row.status == "passed" && stats && stats->is_object() && num(*stats, {"median_s"}) > 0;
    if (row.timed) {
      row.median = num(*stats, {"median_s"});
      row.mean = num(*stats, {"mean_s"});
      row.min = num(*stats, {"min_s"});
      row.max = num(*stats, {"max_s"});
      row.stddev = num(*stats, {"stddev_s"});
      row.rel_noise = num(*stats, {"rel_noise"});
      if (const json* nr = at(*stats, {"noise_reached"}); nr && nr->is_boolean()) row.noise_reached = nr->get<bool>();
      row.samples = static_cast<std::size_t>(num(*stats, {"count"}));
      if (const json* s = at(r, {"samples_s"}); s && s->is_array() && !s->empty()) row.samples = s->size();
      row.gflops = num(r, {"rates", "gflops"});
      row.gbps = num(r, {"rates", "gbytes_per_s"});
      row.intensity = num(r, {"rates", "arithmetic_intensity"});
    }
    row.flops = num(r, {"work", "flops"});
    row.bytes = num(r, {"work", "bytes"});
    if (row.intensity <= 0 && row.flops > 0 && row.bytes > 0) row.intensity = row.flops / row.bytes;
    if (row.timed && row.gflops <= 0 && row.flops > 0) row.gflops = row.flops / row.median / 1e9;
    if (row.timed && row.gbps <= 0 && row.bytes > 0) row.gbps = row.bytes / row.median / 1e9;
    row.io_bytes = num(r, {"memory", "io_device_bytes"});
    row.ws_bytes = num(r, {"memory", "workspace_peak_bytes"});
    if (const json* c = at(r, {"check"}); c && c->is_object()) {
      if (const json* p = at(*c, {"passed"}); p && p->is_boolean()) row.check_passed = p->get<bool>();
      row.max_abs_error = num(*c, {"max_abs_error"});
      row.rel_l2_error = num(*c, {"rel_l2_error"});
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

std::vector<std::string> problems_of(const std::vector<Row>& rows) {
  std::vector<std::string> out;
  for (const auto& r : rows)
    if (std::find(out.begin(), out.end(), r.problem) == out.end()) out.push_back(r.problem);
  return out;
}

std::vector<const Row*> rows_of(const std::vector<Row>& rows, const std::string& problem) {
  std::vector<const Row*> out;
  for (const auto& r : rows)
    if (r.problem == problem) out.push_back(&r);
  return out;
}

std::vector<std::string> param_names(const std::vector<const Row*>& rows) {
  std::vector<std::string> out;
  for (const Row* r : rows)
    for (const auto& k : r->param_order)
      if (std::find(out.begin(), out.end(), k) == out.end()) out.push_back(k);
  return out;
}

// Splits a problem's parameters into those that vary (table columns) and those with one
// value in every row (said once, above the table).
struct ParamSplit {
  std::vector<std::string> columns;
  std::vector<std::string> fixed;
};

ParamSplit split_params(const std::vector<const Row*>& prow) {
  ParamSplit split;
  for (const auto& n : param_names(prow)) {
    bool same = prow.size() > 1;
    // find, not operator[]: a const json's operator[] on a missing key is undefined
    // behaviour, and the first row need not have every parameter.
    const json& first = prow.front()->params;
    const auto f = first.find(n);
    for (const Row* r : prow) {
      const auto it = r->params.find(n);
      if (f == first.end() || it == r->params.end() || *it != *f) same = false;
    }
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

std::string fmt_seconds(double s) {
  if (s >= 1) return fmt::format("{:.3f} s", s);
  if (s >= 1e-3) return fmt::format("{:.3f} ms", s * 1e3);
  if (s >= 1e-6) return fmt::format("{:.2f} us", s * 1e6);
  return fmt::format("{:.0f} ns", s * 1e9);
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

std::string fixed_text(const Row& any, const std::vector<std::string>& fixed) {
  std::vector<std::string> parts;
  for (const auto& n : fixed) parts.push_back(fmt::format("{}={}", n, param_text(any.params[n])));
  return fmt::format("{}", fmt::join(parts, ", "));
}

std::string summary_line(const std::vector<Row>& rows) {
  std::map<std::string, int> n;
  for (const auto& r : rows) ++n[r.status];
  std::string s = fmt::format("{} results: {} passed, {} failed, {} skipped, {} errors", rows.size(), n["passed"],
                              n["failed"], n["skipped"], n["error"]);
  for (const auto& [status, count] : n)
    if (status != "passed" && status != "failed" && status != "skipped" && status != "error")
      s += fmt::format(", {} {}", count, status);
  return s;
}

// The environment as (label, value) lines, shared by markdown and HTML.
std::vector<std::pair<std::string, std::string>> environment_lines(const json& report) {
  std::vector<std::pair<std::string, std::string>> out;
  const json env = report.contains("environment") ? report["environment"] : json::object();
  const json suite = report.contains("suite") ? report["suite"] : json::object();
  std::string s = str(suite, {"name"}, "?");
  if (!str(suite, {"file"}).empty()) s += fmt::format(" ({})", str(suite, {"file"}));
  // An integer as written (a float such as 1e300 would not convert to an integer type).
  if (const json* c = at(suite, {"cases"}); c && c->is_number()) s += fmt::format(", {} cases", c->dump());
  out.emplace_back("Suite", s);
  out.emplace_back("Date", str(env, {"date"}, "?"));
  if (const json* g = at(env, {"gpu"}); g && g->is_object()) {
    std::string gpu = str(*g, {"name"}, "?");
    std::vector<std::string> details;
    if (num(*g, {"sm_count"}) > 0) details.push_back(fmt::format("{} SMs", fmt_num(num(*g, {"sm_count"}))));
    if (!str(*g, {"compute_capability"}).empty()) details.push_back("cc " + str(*g, {"compute_capability"}));
    if (num(*g, {"memory_gib"}) > 0) details.push_back(fmt::format("{:.0f} GiB", num(*g, {"memory_gib"})));
    if (num(*g, {"sm_clock_max_mhz"}) > 0)
      details.push_back(fmt::format("SM clock up to {} MHz", fmt_num(num(*g, {"sm_clock_max_mhz"}))));
    if (num(*g, {"memory_clock_mhz"}) > 0)
      details.push_back(fmt::format("memory clock {} MHz", fmt_num(num(*g, {"memory_clock_mhz"}))));
    if (!details.empty()) gpu += fmt::format(" ({})", fmt::join(details, ", "));
    out.emplace_back("GPU", gpu);
  } else {
    const std::string why = str(env, {"gpu_unavailable_reason"});
    out.emplace_back("GPU", why.empty() ? "none" : "none: " + why);
  }
  if (const json* p = device_peaks(env)) {
    std::vector<std::string> parts;
    if (num(*p, {"dram_gbytes_per_s"}) > 0) parts.push_back(fmt::format("{} GB/s DRAM", fmt_3(num(*p, {"dram_gbytes_per_s"}))));
    if (num(*p, {"fp32_gflops"}) > 0) parts.push_back(fmt::format("{} GFLOP/s FP32", fmt_3(num(*p, {"fp32_gflops"}))));
    if (!parts.empty()) out.emplace_back("Device peaks", fmt::format("{}", fmt::join(parts, ", ")));
  }
  out.emplace_back("CUDA", fmt::format("driver {}, runtime {}", str(env, {"cuda_driver"}, "?"), str(env, {"cuda_runtime"}, "?")));
  std::string host = str(env, {"host"}, "?");
  if (!str(env, {"cpu"}).empty()) host += ": " + str(env, {"cpu"});
  if (num(env, {"cpu_threads"}) > 0) host += fmt::format(", {} threads", fmt_num(num(env, {"cpu_threads"})));
  out.emplace_back("Host", host);
  out.emplace_back("Harness", fmt::format("{}, commit {}", str(env, {"harness_version"}, "?"), str(env, {"git_commit"}, "?")));
  if (!str(env, {"command_line"}).empty()) out.emplace_back("Command", str(env, {"command_line"}));
  if (const json* st = at(suite, {"settings"}); st && st->is_object()) {
    std::vector<std::string> parts;
    if (!str(*st, {"cache"}).empty()) parts.push_back("cache " + str(*st, {"cache"}));
    if (at(*st, {"warmup"})) parts.push_back(fmt::format("warm-up {}", fmt_num(num(*st, {"warmup"}))));
    if (at(*st, {"min_samples"}) || at(*st, {"min_time_s"}))
      parts.push_back(fmt::format("at least {} samples and {} s", fmt_num(num(*st, {"min_samples"})),
                                  fmt_num(num(*st, {"min_time_s"}))));
    if (at(*st, {"max_time_s"})) parts.push_back(fmt::format("at most {} s", fmt_num(num(*st, {"max_time_s"}))));
    if (at(*st, {"noise"})) parts.push_back(fmt::format("noise target {}%", fmt_num(num(*st, {"noise"}) * 100)));
    if (!parts.empty()) out.emplace_back("Settings", fmt::format("{}", fmt::join(parts, ", ")));
  }
  return out;
}

// The cells of a result row in the tables (markdown and HTML), after the parameters.
struct Cells {
  std::string status, median, noise, gflops, gbps, memory, note;
};

Cells cells_of(const Row& r) {
  Cells c;
  c.status = r.status;
  c.median = r.timed ? fmt_seconds(r.median) : "-";
  c.noise = r.timed ? fmt::format("{:.1f}%", r.rel_noise * 100) : "-";
  c.gflops = r.timed && r.flops > 0 ? fmt_3(r.gflops) : "-";
  c.gbps = r.timed && r.bytes > 0 ? fmt_3(r.gbps) : "-";
  c.memory = r.ws_bytes > 0 ? fmt_bytes(r.ws_bytes) : "-";
  std::vector<std::string> notes;
  if (!r.reason.empty()) notes.push_back(r.reason);
  if (r.timed && !r.noise_reached) notes.push_back("noise target not reached");
  c.note = fmt::format("{}", fmt::join(notes, "; "));
  return c;
}

const char* const kTableHead[] = {"status", "median", "noise", "GFLOP/s", "GB/s", "extra memory", "note"};

std::string md_escape(const std::string& s) {
  std::string out;
  for (char ch : s) {
    if (ch == '|') out += "\\|";
    else if (ch == '\n' || ch == '\r') out += ' ';
    else out += ch;
  }
  return out;
}

}  // namespace

// ---------------------------------------------------------------------------------------
// Markdown

std::string render_report_markdown(const json& report) {
  const std::vector<Row> rows = read_rows(report);
  std::string o;
  o += fmt::format("# harness report: {}\n\n", md_escape(str(report, {"suite", "name"}, "?")));
  if (!str(report, {"suite", "description"}).empty()) o += md_escape(str(report, {"suite", "description"})) + "\n\n";
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
      for (const Row* r : prow)
        if (r->params.contains(n) && !r->params[n].is_number()) numeric = false;
      o += numeric ? "---:|" : "---|";
    }
    o += "---|---:|---:|---:|---:|---:|---|\n";
    for (const Row* r : prow) {
      const Cells c = cells_of(*r);
      o += fmt::format("| {} |", md_escape(r->variant));
      for (const auto& n : names)
        o += fmt::format(" {} |", r->params.contains(n) ? md_escape(param_text(r->params[n])) : "");
      o += fmt::format(" {} | {} | {} | {} | {} | {} | {} |\n", c.status, c.median, c.noise, c.gflops, c.gbps, c.memory,
                       md_escape(c.note));
    }
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

std::string render_report_csv(const json& report) {
  const std::vector<Row> rows = read_rows(report);
  std::vector<const Row*> all;
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
  for (const Row& r : rows) {
    std::vector<std::string> f = {r.name, r.case_name, r.problem, r.variant, r.backend};
    for (const auto& n : names) f.push_back(r.params.contains(n) ? param_text(r.params[n]) : "");
    f.push_back(r.status);
    f.push_back(r.reason);
    auto timed = [&](double v) { return r.timed ? fmt_csv_number(v) : std::string(); };
    f.push_back(r.timed ? fmt::format("{}", r.samples) : "");
    for (double v : {r.median, r.mean, r.min, r.max, r.stddev, r.rel_noise, r.gflops, r.gbps}) f.push_back(timed(v));
    f.push_back(r.intensity > 0 ? fmt_csv_number(r.intensity) : "");
    for (double v : {r.flops, r.bytes, r.io_bytes, r.ws_bytes}) f.push_back(fmt_csv_number(v));
    f.push_back(r.check_passed ? (*r.check_passed ? "true" : "false") : "");
    f.push_back(r.check_passed ? fmt_csv_number(r.max_abs_error) : "");
    f.push_back(r.check_passed ? fmt_csv_number(r.rel_l2_error) : "");
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

bool numeric_param(const std::vector<const Row*>& rows, const std::string& name) {
  bool any = false;
  for (const Row* r : rows) {
    if (!r->params.contains(name)) continue;
    if (!r->params[name].is_number()) return false;
    any = true;
  }
  return any;
}

std::size_t distinct(const std::vector<const Row*>& rows, const std::string& name) {
  std::set<std::string> v;
  for (const Row* r : rows)
    if (r->params.contains(name)) v.insert(r->params[name].dump());
  return v.size();
}

Layout choose_layout(const std::vector<const Row*>& rows, const std::vector<std::string>& prefer, bool prefer_first) {
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
    for (const Row* r : rows) {
      const std::string xv = r->params.contains(best) ? r->params[best].dump() : "";
      const std::string v = r->params.contains(n) ? r->params[n].dump() : "";
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

std::string series_key(const Row& r, const Layout& l) {
  std::string key = r.variant;
  for (const auto& n : l.series_params)
    if (r.params.contains(n)) key += fmt::format(" {}={}", n, param_text(r.params[n]));
  return key;
}

std::string describe(const Row& r) {
  std::string s = r.problem + "/" + r.variant;
  for (const auto& k : r.param_order) s += fmt::format(" {}={}", k, param_text(r.params[k]));
  return s;
}

// Index of the series with this label, added when new.
std::size_t series_index(std::vector<svg::Series>& series, const std::string& label) {
  for (std::size_t i = 0; i < series.size(); ++i)
    if (series[i].label == label) return i;
  series.push_back({label, {}, true});
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

std::string throughput_chart(const std::string& problem, const std::vector<const Row*>& prow, std::size_t index) {
  std::vector<const Row*> timed;
  for (const Row* r : prow)
    if (r->timed) timed.push_back(r);
  if (timed.empty()) {
    std::map<std::string, int> n;
    for (const Row* r : prow) ++n[r->status];
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
  for (const Row* r : timed) {
    all_flops = all_flops && r->flops > 0;
    all_bytes = all_bytes && r->bytes > 0;
    tmax = std::max(tmax, r->median);
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
  for (const Row* r : timed) keys.insert(series_key(*r, l));
  constexpr std::size_t kMaxSeries = 12;
  const bool by_work = keys.size() > kMaxSeries && (all_flops || all_bytes);
  const std::string x_label = by_work ? (all_flops ? "work per run (GFLOP)" : "bytes per run (GB)") : l.x_label;
  c.title = fmt::format("{}: {} against {}", problem, metric, by_work ? std::string(all_flops ? "work per run" : "bytes per run") : l.x_label);
  c.subtitle = all_flops || all_bytes ? fmt::format("{} at the median time of each result; higher is better", metric)
                                      : "median time of each result; lower is better";
  if (by_work) c.subtitle += "; one point per shape, one series per variant";
  std::vector<double> xs, ys;
  for (const Row* r : timed) {
    if (!by_work && !r->params.contains(l.x)) continue;
    const double x = by_work ? (all_flops ? r->flops : r->bytes) * 1e-9 : r->params[l.x].get<double>();
    const double y = all_flops ? r->gflops : all_bytes ? r->gbps : r->median * scale;
    const std::size_t si = series_index(c.series, by_work ? r->variant : series_key(*r, l));
    const std::string value = all_flops ? fmt::format("{} GFLOP/s", fmt_3(y))
                              : all_bytes ? fmt::format("{} GB/s", fmt_3(y))
                                          : fmt_seconds(r->median);
    c.series[si].points.push_back({x, y, fmt::format("{}: {} (median {}, {} samples)", describe(*r), value,
                                                     fmt_seconds(r->median), r->samples)});
    if (by_work) c.series[si].line = false;
    xs.push_back(x);
    ys.push_back(y);
  }
  x_axis(c.x, xs, x_label);
  y_axis(c.y, ys, all_flops || all_bytes ? metric : fmt::format("median time ({})", unit),
         all_flops || all_bytes ? 50 : 20);
  return svg::render(c);
}

std::string roofline_chart(const json& report, const std::vector<Row>& rows, std::string& note) {
  double peak_bw = 0, peak_flops = 0;
  bool have_peaks = false;
  static const json kNoEnvironment = json::object();
  if (const json* p = device_peaks(report.contains("environment") ? report["environment"] : kNoEnvironment)) {
    peak_bw = num(*p, {"dram_gbytes_per_s"});
    peak_flops = num(*p, {"fp32_gflops"});
    have_peaks = peak_bw > 0 || peak_flops > 0;
  }
  std::string source = "device peak";
  if (!have_peaks) {
    source = "best measured";
    for (const auto& r : rows) {
      if (!r.timed) continue;
      if (r.bytes > 0) peak_bw = std::max(peak_bw, r.gbps);
      if (r.flops > 0) peak_flops = std::max(peak_flops, r.gflops);
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
    if (!r.timed) continue;
    if (!(r.flops > 0 && r.bytes > 0 && r.intensity > 0 && r.gflops > 0)) {
      ++not_shown;
      continue;
    }
    const std::size_t si = series_index(c.series, r.problem + "/" + r.variant);
    c.series[si].line = false;
    const double roof = peak_bw > 0 && peak_flops > 0 ? std::min(peak_flops, peak_bw * r.intensity)
                        : peak_flops > 0               ? peak_flops
                                                       : peak_bw * r.intensity;
    c.series[si].points.push_back({r.intensity, r.gflops,
                                   fmt::format("{}: {} GFLOP/s at {} FLOP/byte ({:.0f}% of the roof)", describe(r),
                                               fmt_3(r.gflops), fmt_3(r.intensity),
                                               roof > 0 ? 100 * r.gflops / roof : 0.0)});
    xlo = std::min(xlo, r.intensity);
    xhi = std::max(xhi, r.intensity);
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

std::string memory_charts(const std::vector<Row>& rows) {
  std::string o;
  std::size_t index = 0;
  for (const auto& problem : problems_of(rows)) {
    const auto prow = rows_of(rows, problem);
    bool any = false;
    for (const Row* r : prow) any = any || r->ws_bytes > 0 || r->oom();
    if (!any) continue;
    const Layout l = choose_layout(prow, {"seq_len", "N", "n", "S", "L", "M", "K"}, true);
    if (!l.ok) continue;
    double wmax = 0;
    for (const Row* r : prow) wmax = std::max(wmax, r->ws_bytes);
    std::string unit = "B";
    double div = 1;
    if (wmax >= 1024.0 * 1024 * 1024) unit = "GiB", div = 1024.0 * 1024 * 1024;
    else if (wmax >= 1024.0 * 1024) unit = "MiB", div = 1024.0 * 1024;
    else if (wmax >= 1024.0) unit = "KiB", div = 1024.0;
    // Only the series that used extra memory or ran out of it (a host variant's 0 would
    // only flatten the chart).
    std::set<std::string> used;
    for (const Row* r : prow)
      if (r->ws_bytes > 0 || r->oom()) used.insert(series_key(*r, l));
    svg::Chart c;
    c.id = fmt::format("memory-{}", index++);
    c.title = fmt::format("{}: extra device memory against {}", problem, l.x_label);
    c.subtitle = "peak workspace each variant allocated beyond inputs and outputs; x at the top: skipped, out of memory";
    c.edge_marker_label = "out of memory (skipped)";
    std::vector<double> xs, ys;
    for (const Row* r : prow) {
      if (!r->params.contains(l.x) || !used.count(series_key(*r, l))) continue;
      const double x = r->params[l.x].get<double>();
      const std::size_t si = series_index(c.series, series_key(*r, l));
      if (r->oom()) {
        c.edge_markers.push_back({x, si, fmt::format("{}: {}", describe(*r), r->reason)});
        xs.push_back(x);
        continue;
      }
      if (r->status != "passed" && !(r->ws_bytes > 0)) continue;
      c.series[si].points.push_back(
          {x, r->ws_bytes / div, fmt::format("{}: {} extra", describe(*r), fmt_bytes(r->ws_bytes))});
      xs.push_back(x);
      ys.push_back(r->ws_bytes / div);
    }
    x_axis(c.x, xs, l.x_label);
    y_axis(c.y, ys, fmt::format("workspace peak ({})", unit), 16);
    if (c.y.log) {  // decades of sizes: bytes on the axis, labelled 256 KiB, 1 MiB, ...
      c.y.ticks = svg::TickStyle::bytes;
      c.y.label = "workspace peak (bytes)";
      for (auto& series : c.series)
        for (auto& p : series.points) p.y *= div;
    }
    o += svg::render(c);
  }
  if (o.empty())
    o = "<p class=\"nochart\">No result used extra device memory (workspace_peak_bytes is 0 everywhere) and none "
        "ran out of memory: no memory chart.</p>\n";
  return o;
}

std::string html_table(const std::vector<const Row*>& prow) {
  const ParamSplit split = split_params(prow);
  const auto& names = split.columns;
  std::string o;
  if (!split.fixed.empty())
    o += fmt::format("<p>Fixed parameters: {}</p>\n", escape(fixed_text(*prow.front(), split.fixed)));
  o += "<table class=\"results\">\n<thead><tr><th>variant</th>";
  for (const auto& n : names) o += fmt::format("<th>{}</th>", escape(n));
  for (const char* h : kTableHead) o += fmt::format("<th>{}</th>", h);
  o += "</tr></thead>\n<tbody>\n";
  for (const Row* r : prow) {
    const Cells c = cells_of(*r);
    o += fmt::format("<tr class=\"{}\"><td>{}</td>", escape(r->status), escape(r->variant));
    for (const auto& n : names)
      o += fmt::format("<td class=\"num\">{}</td>", r->params.contains(n) ? escape(param_text(r->params[n])) : "");
    o += fmt::format(
        "<td class=\"status\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>"
        "<td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"note\">{}</td></tr>\n",
        escape(c.status), escape(c.median), escape(c.noise), escape(c.gflops), escape(c.gbps), escape(c.memory),
        escape(c.note));
  }
  return o + "</tbody>\n</table>\n";
}

const char* const kStyle = R"css(
body { font-family: Helvetica, Arial, sans-serif; color: #222; max-width: 1120px; margin: 24px auto; padding: 0 16px; }
h1 { font-size: 26px; margin-bottom: 4px; }
h2 { font-size: 20px; margin-top: 36px; border-bottom: 1px solid #ddd; padding-bottom: 4px; }
h3 { font-size: 16px; margin-top: 24px; }
table { border-collapse: collapse; font-size: 13px; margin: 8px 0; }
th, td { border: 1px solid #d8d8d8; padding: 3px 8px; text-align: left; vertical-align: top; }
th { background: #f3f3f3; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
table.env th { text-align: left; width: 130px; }
tr.passed td.status { color: #2a7a2a; }
tr.failed td.status, tr.error td.status, tr.crashed td.status, tr.timeout td.status { color: #b00020; font-weight: bold; }
tr.skipped td { color: #777; }
td.note { max-width: 420px; font-size: 12px; }
p.summary { font-size: 15px; font-weight: bold; }
p.nochart, p.note { color: #555; font-style: italic; }
svg.chart { display: block; margin: 12px 0 20px 0; max-width: 100%; height: auto; border: 1px solid #eee; }
nav a { margin-right: 14px; }
footer { margin-top: 40px; font-size: 12px; color: #777; }
)css";

}  // namespace

std::string render_report_html(const json& report) {
  const std::vector<Row> rows = read_rows(report);
  const std::string suite = str(report, {"suite", "name"}, "?");
  std::string o;
  o += "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  // Nothing may be fetched: the file is the whole report.
  o += "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">\n";
  o += fmt::format("<title>harness report: {}</title>\n<style>{}</style>\n</head>\n<body>\n", escape(suite), kStyle);
  o += fmt::format("<h1>harness report: {}</h1>\n", escape(suite));
  if (!str(report, {"suite", "description"}).empty())
    o += fmt::format("<p>{}</p>\n", escape(str(report, {"suite", "description"})));
  o += "<table class=\"env\">\n";
  for (const auto& [k, v] : environment_lines(report))
    o += fmt::format("<tr><th>{}</th><td>{}</td></tr>\n", escape(k), escape(v));
  o += "</table>\n";
  o += fmt::format("<p class=\"summary\">{}</p>\n", escape(summary_line(rows)));
  o += "<nav><a href=\"#throughput\">Throughput</a><a href=\"#roofline-section\">Roofline</a>"
       "<a href=\"#memory\">Memory</a><a href=\"#results\">Results</a></nav>\n";

  o += "<h2 id=\"throughput\">Throughput</h2>\n";
  std::size_t index = 0;
  for (const auto& problem : problems_of(rows)) o += throughput_chart(problem, rows_of(rows, problem), index++);
  if (rows.empty()) o += "<p class=\"nochart\">The report has no results.</p>\n";

  o += "<h2 id=\"roofline-section\">Roofline</h2>\n";
  std::string note;
  o += roofline_chart(report, rows, note);
  if (!note.empty()) o += fmt::format("<p class=\"note\">{}</p>\n", escape(note));

  o += "<h2 id=\"memory\">Memory</h2>\n";
  o += memory_charts(rows);

  o += "<h2 id=\"results\">Results</h2>\n";
  for (const auto& problem : problems_of(rows)) {
    o += fmt::format("<h3>{}</h3>\n", escape(problem));
    o += html_table(rows_of(rows, problem));
  }
  o += fmt::format("<footer>Rendered by harness {} from a report written by harness {} (schema {} version {}); "
                   "hover over a point for its details.</footer>\n",
                   escape(harness_version()), escape(str(report, {"environment", "harness_version"}, "?")),
                   escape(str(report, {"schema"}, "?")), fmt_num(num(report, {"schema_version"})));
  o += "</body>\n</html>\n";
  return o;
}

std::string render_report(const json& report, const std::string& format) {
  if (str(report, {"schema"}) != kReportSchema)
    throw InputError("not a harness report (Google Benchmark JSON has no results to render)");
  if (format == "md") return render_report_markdown(report);
  if (format == "csv") return render_report_csv(report);
  if (format == "html") return render_report_html(report);
  throw InputError(fmt::format("unknown report format '{}' (md, csv or html)", format));
}

}  // namespace harness
