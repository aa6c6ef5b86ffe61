#include "report/report.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>

#include <fmt/format.h>

#include "types/environment.hpp"
#include "types/events.hpp"
#include "harness/error.hpp"
#include "measure/measure.hpp"
#include "report/integrity_json.hpp"
#include "measure/stats.hpp"
#include "report/json_get.hpp"
#include "report/read_text.hpp"
#include "report/sensors_json.hpp"

namespace harness {

namespace {
nlohmann::json param_value_json(const ParamValue& v) {
  return std::visit([](const auto& x) { return nlohmann::json(x); }, v);
}

nlohmann::json params_json(const Params& p) {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& [n, v] : p.entries()) out[n] = param_value_json(v);
  return out;
}
}  // namespace

nlohmann::json settings_to_json(const MeasureSettings& s) {
  return {{"warmup", s.warmup},   {"min_samples", s.min_samples}, {"min_time_s", s.min_time},
          {"max_time_s", s.max_time}, {"noise", s.noise},        {"cache", std::string(to_string(s.cache))},
          {"timeout_s", s.timeout}, {"timing", std::string(to_string(s.timing))},
          {"stopping", {{"rule", std::string(to_string(s.stopping.rule))}, {"samples", s.stopping.samples},
                        {"max_angle", s.stopping.max_angle}, {"min_r2", s.stopping.min_r2}}},
          {"throttle", s.throttle},
          {"steady", s.steady ? nlohmann::json(*s.steady) : nlohmann::json(nullptr)},  // null: the dtype rule decides
          {"interleave", s.interleave ? nlohmann::json(*s.interleave) : nlohmann::json(nullptr)},
          {"interleave_order", std::string(to_string(s.round_order))},
          {"steady_settings", {{"window_s", s.steady_settings.window}, {"tolerance", s.steady_settings.tolerance},
                               {"min_time_s", s.steady_settings.min_time}, {"max_time_s", s.steady_settings.max_time},
                               {"burst_s", s.steady_settings.burst}}}};
}

MeasureSettings settings_from_json(const nlohmann::json& s) {
  using namespace json_get;
  MeasureSettings m;
  if (const auto v = num(s, {"warmup"}); v && *v >= 0 && *v < 1e9) m.warmup = static_cast<decltype(m.warmup)>(*v);
  if (const auto v = num(s, {"min_samples"}); v && *v >= 0 && *v < 2e9)
    m.min_samples = static_cast<decltype(m.min_samples)>(*v);
  m.min_time = num_or(s, {"min_time_s"}, m.min_time);
  m.max_time = num_or(s, {"max_time_s"}, m.max_time);
  m.noise = num_or(s, {"noise"}, m.noise);
  m.cache = str_or(s, {"cache"}, "cold") == "hot" ? CacheMode::hot : CacheMode::cold;
  m.timeout = num_or(s, {"timeout_s"}, 0.0);
  m.timing = str_or(s, {"timing"}, "events") == "graph" ? TimingMode::graph : TimingMode::events;
  m.stopping.rule = stopping_rule_from_string(str_or(s, {"stopping", "rule"}, "noise")).value_or(StoppingRule::noise);
  if (const auto v = num(s, {"stopping", "samples"}); v && *v >= 1 && *v <= 1e4) m.stopping.samples = static_cast<int>(*v);
  m.stopping.max_angle = num_or(s, {"stopping", "max_angle"}, m.stopping.max_angle);
  m.stopping.min_r2 = num_or(s, {"stopping", "min_r2"}, m.stopping.min_r2);
  m.throttle = num_or(s, {"throttle"}, m.throttle);
  m.steady = boolean(s, {"steady"});
  m.interleave = boolean(s, {"interleave"});
  // Reports before the order existed timed their rounds in plan order.
  m.round_order = round_order_from_string(str_or(s, {"interleave_order"}, "fixed")).value_or(RoundOrder::fixed);
  SteadySettings& st = m.steady_settings;
  st.window = num_or(s, {"steady_settings", "window_s"}, st.window);
  st.tolerance = num_or(s, {"steady_settings", "tolerance"}, st.tolerance);
  st.min_time = num_or(s, {"steady_settings", "min_time_s"}, st.min_time);
  st.max_time = num_or(s, {"steady_settings", "max_time_s"}, st.max_time);
  st.burst = num_or(s, {"steady_settings", "burst_s"}, st.burst);
  return m;
}

nlohmann::json result_to_json(const Result& r) {
  nlohmann::json order = nlohmann::json::array();
  for (const auto& [n, v] : r.params.entries()) order.push_back(n);
  nlohmann::json j = {{"name", r.name},
                      {"case", r.case_name},
                      {"problem", r.problem},
                      {"variant", r.variant},
                      {"backend", r.backend},
                      {"params", params_json(r.params)},
                      {"param_order", std::move(order)},
                      {"status", std::string(to_string(r.status))},
                      {"reason", r.reason},
                      {"reference", r.reference},
                      {"work", {{"flops", r.work.flops}, {"bytes", r.work.bytes}}},
                      {"memory", {{"io_device_bytes", r.io_device_bytes}, {"workspace_peak_bytes", r.workspace_peak_bytes}}},
                      {"settings", settings_to_json(r.settings)}};
  j["profile"] = r.profile;
  if (!r.extra.is_null()) j["extra"] = r.extra;
  if (!r.config.empty()) j["config"] = r.config;
  if (r.throttled) j["throttled"] = true;
  if (r.timing) j["integrity"] = integrity_to_json(r.integrity);
  if (!r.device.empty()) j["device"] = r.device;
  if (r.check) {
    const CheckResult& c = *r.check;
    j["check"] = {{"passed", c.passed},
                  {"elements", c.elements},
                  {"mismatches", c.mismatches},
                  {"nonfinite", c.nonfinite},
                  {"unwritten", c.unwritten},
                  {"max_abs_error", c.max_abs_error},
                  {"rel_l2_error", c.rel_l2_error},
                  {"tolerance", {{"abs", c.tolerance.abs}, {"rel", c.tolerance.rel}}},
                  {"l2_failures", c.l2_failures},
                  {"sampled", c.sampled},
                  {"worst", c.worst}};
    if (c.tolerance.rel_l2 > 0) j["check"]["tolerance"]["rel_l2"] = c.tolerance.rel_l2;  // only where set
  } else {
    j["check"] = nullptr;
  }
  if (r.timing) {
    const Timing& t = *r.timing;
    const Stats& s = t.stats;
    j["samples_s"] = t.samples;
    j["stats"] = {{"count", s.count},   {"min_s", s.min},       {"max_s", s.max},
                  {"mean_s", s.mean},   {"median_s", s.median}, {"stddev_s", s.stddev},
                  {"q1_s", s.q1},       {"q3_s", s.q3},         {"rel_noise", s.has_noise() ? nlohmann::json(s.rel_noise) : nlohmann::json(nullptr)},
                  {"noise_reached", t.noise_reached}, {"stopping_rule", t.stopping_rule},
                  {"stop_reason", t.stop_reason}, {"wall_time_s", t.wall_time},
                  {"timing_mode", t.mode}, {"launches_per_sample", t.launches_per_sample}};
    if (!t.note.empty()) j["stats"]["timing_note"] = t.note;
    j["stats"]["interleaved"] = t.interleaved;
    if (t.interleaved) j["stats"]["interleave_rounds"] = t.rounds;
    if (t.clocks) {
      const ClockStats& c = *t.clocks;
      j["clocks"] = {{"min_mhz", c.min_mhz},     {"median_mhz", c.median_mhz}, {"max_mhz", c.max_mhz},
                     {"threshold", c.threshold}, {"throttled_batches", c.throttled_batches},
                     {"throttled", c.throttled()}, {"mhz", c.mhz}};
    }
    if (t.sensors) j["sensors"] = sensors_to_json(*t.sensors);
    if (t.steady) j["steady"] = steady_to_json(*t.steady);
    j["rates"] = {{"gflops", r.gflops}, {"gbytes_per_s", r.gbytes_per_s}, {"arithmetic_intensity", r.intensity}};
    // Written when known (a clock, sensors): absent, not 0, where they are not.
    if (r.cycles_per_launch > 0) j["rates"]["cycles_per_launch"] = r.cycles_per_launch;
    if (r.energy_per_launch_j > 0) j["rates"]["energy_per_launch_j"] = r.energy_per_launch_j;
    if (r.flop_per_j > 0) j["rates"]["flop_per_j"] = r.flop_per_j;
  } else {
    j["samples_s"] = nlohmann::json::array();
    j["stats"] = nullptr;
    j["rates"] = nullptr;
  }
  return j;
}

namespace {
// Parameters are scalars; anything else (a hand-edited report) is kept as its JSON text.
ParamValue param_from_json(const nlohmann::json& v) {
  if (v.is_boolean()) return v.get<bool>();
  if (v.is_number_integer()) return v.get<std::int64_t>();
  if (v.is_number()) return v.get<double>();
  if (v.is_string()) return v.get<std::string>();
  return v.dump();
}

// The declared order of the parameters: "param_order" (schema 2), else (schema 1) the
// order in which the result name lists them ("gemm/tiled/M:4096/N:4096/K:4096"); any
// parameter neither names comes last, in key order.
std::vector<std::string> param_order(const nlohmann::json& j, const nlohmann::json& params, const std::string& name) {
  std::vector<std::string> order;
  auto add = [&](const std::string& key) {
    if (params.contains(key) && std::find(order.begin(), order.end(), key) == order.end()) order.push_back(key);
  };
  if (const auto* o = json_get::at(j, {"param_order"}); o && o->is_array()) {
    for (const auto& k : *o)
      if (k.is_string()) add(k.get<std::string>());
  } else {
    std::size_t pos = 0, seg = 0;
    while (pos <= name.size()) {
      std::size_t end = name.find('/', pos);
      if (end == std::string::npos) end = name.size();
      if (seg >= 2) {
        const std::string part = name.substr(pos, end - pos);
        add(part.substr(0, part.find(':')));
      }
      ++seg;
      pos = end + 1;
    }
  }
  for (const auto& [k, v] : params.items()) add(k);
  return order;
}

std::optional<Timing> timing_from_json(const nlohmann::json& j) {
  using namespace json_get;
  Timing t;
  if (const auto* s = at(j, {"samples_s"}); s && s->is_array())
    for (const auto& x : *s)
      if (x.is_number() && std::isfinite(x.get<double>())) t.samples.push_back(x.get<double>());
  const nlohmann::json* stats = at(j, {"stats"});
  if (!stats || !stats->is_object()) stats = nullptr;
  // Timed: a median stated, or samples to take it from.
  if (!(stats && num(*stats, {"median_s"})) && t.samples.empty()) return std::nullopt;
  t.stats = compute_stats(t.samples);
  if (stats) {  // the figures as written win over the recomputed ones
    Stats& s = t.stats;
    s.count = count_or(*stats, {"count"}, t.samples.empty() ? s.count : t.samples.size());
    s.min = num_or(*stats, {"min_s"}, s.min);
    s.max = num_or(*stats, {"max_s"}, s.max);
    s.mean = num_or(*stats, {"mean_s"}, s.mean);
    s.median = num_or(*stats, {"median_s"}, s.median);
    s.stddev = num_or(*stats, {"stddev_s"}, s.stddev);
    s.q1 = num_or(*stats, {"q1_s"}, s.q1);
    s.q3 = num_or(*stats, {"q3_s"}, s.q3);
    s.rel_noise = num_or(*stats, {"rel_noise"}, s.rel_noise);
    t.noise_reached = boolean(*stats, {"noise_reached"}).value_or(true);
    t.stop_reason = str_or(*stats, {"stop_reason"});
    t.stopping_rule = str_or(*stats, {"stopping_rule"});
    t.mode = str_or(*stats, {"timing_mode"});
    t.note = str_or(*stats, {"timing_note"});
    t.launches_per_sample = count_or(*stats, {"launches_per_sample"}, 1);
    t.wall_time = num_or(*stats, {"wall_time_s"});
    t.interleaved = boolean(*stats, {"interleaved"}).value_or(false);
    t.rounds = count_or(*stats, {"interleave_rounds"}, 0);
  } else {
    t.noise_reached = true;
  }
  if (const auto* c = at(j, {"clocks"}); c && c->is_object()) {
    std::vector<double> mhz;
    if (const auto* m = at(*c, {"mhz"}); m && m->is_array())
      for (const auto& x : *m)
        if (x.is_number()) mhz.push_back(x.get<double>());
    t.clocks = clock_stats(std::move(mhz), num_or(*c, {"max_mhz"}), num_or(*c, {"threshold"}, 0.75));
    t.clocks->min_mhz = num_or(*c, {"min_mhz"}, t.clocks->min_mhz);
    t.clocks->median_mhz = num_or(*c, {"median_mhz"}, t.clocks->median_mhz);
    t.clocks->throttled_batches = count_or(*c, {"throttled_batches"}, t.clocks->throttled_batches);
  }
  if (const auto* s = at(j, {"sensors"}); s && s->is_object()) t.sensors = sensors_from_json(*s);
  if (const auto* s = at(j, {"steady"}); s && s->is_object()) t.steady = steady_from_json(*s);
  return t;
}

// Field by field with defaults, so that fields added to CheckResult later do not break
// reading older reports. A check without a boolean verdict is no check.
std::optional<CheckResult> check_from_json(const nlohmann::json& j) {
  using namespace json_get;
  const nlohmann::json* c = at(j, {"check"});
  if (!c || !c->is_object() || !boolean(*c, {"passed"})) return std::nullopt;
  CheckResult k;
  k.passed = *boolean(*c, {"passed"});
  k.elements = count_or(*c, {"elements"});
  k.mismatches = count_or(*c, {"mismatches"});
  k.nonfinite = count_or(*c, {"nonfinite"});
  k.unwritten = count_or(*c, {"unwritten"});
  k.max_abs_error = num_or(*c, {"max_abs_error"});
  k.rel_l2_error = num_or(*c, {"rel_l2_error"});
  k.tolerance = {num_or(*c, {"tolerance", "abs"}), num_or(*c, {"tolerance", "rel"}),
                 num_or(*c, {"tolerance", "rel_l2"})};
  k.l2_failures = count_or(*c, {"l2_failures"});
  k.sampled = boolean(*c, {"sampled"}).value_or(false);
  k.worst = str_or(*c, {"worst"});
  return k;
}
}  // namespace

Result result_from_json(const nlohmann::json& j) {
  using namespace json_get;
  Result r;
  r.problem = str_or(j, {"problem"});
  r.variant = str_or(j, {"variant"});
  r.name = str_or(j, {"name"});
  if (r.name.empty()) {
    // Neither a name nor problem and variant (or not an object): json's own exception.
    if (r.problem.empty() || r.variant.empty()) (void)j.at("name").get<std::string>();
    r.name = r.problem + "/" + r.variant;
  }
  r.case_name = str_or(j, {"case"});
  r.backend = str_or(j, {"backend"});
  if (const auto* p = at(j, {"params"}); p && p->is_object())
    for (const auto& k : param_order(j, *p, r.name)) r.params.set(k, param_from_json((*p)[k]));
  r.status = status_from_string(str_or(j, {"status"})).value_or(Status::error);
  r.reason = str_or(j, {"reason"});
  r.reference = str_or(j, {"reference"});
  r.config = str_or(j, {"config"});
  r.work = {num_or(j, {"work", "flops"}), num_or(j, {"work", "bytes"})};
  r.io_device_bytes = count_or(j, {"memory", "io_device_bytes"});
  r.workspace_peak_bytes = count_or(j, {"memory", "workspace_peak_bytes"});
  if (const auto* s = at(j, {"settings"}); s && s->is_object()) r.settings = settings_from_json(*s);
  r.check = check_from_json(j);
  r.timing = timing_from_json(j);
  if (const auto* p = at(j, {"profile"})) r.profile = *p;
  if (const auto* e = at(j, {"extra"})) r.extra = *e;
  r.device = json_get::str_or(j, {"device"});
  r.integrity = integrity_from_json(j);
  r.gflops = num_or(j, {"rates", "gflops"});
  r.gbytes_per_s = num_or(j, {"rates", "gbytes_per_s"});
  r.intensity = num_or(j, {"rates", "arithmetic_intensity"});
  r.cycles_per_launch = num_or(j, {"rates", "cycles_per_launch"});
  r.energy_per_launch_j = num_or(j, {"rates", "energy_per_launch_j"});
  r.flop_per_j = num_or(j, {"rates", "flop_per_j"});
  for (const auto& path : {std::initializer_list<const char*>{"throttled"}, {"stats", "throttled"}, {"clocks", "throttled"}})
    r.throttled = r.throttled || boolean(j, path).value_or(false);
  return r;
}

nlohmann::json benchmarks_json(const std::vector<Result>& results) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& r : results) {
    if (!r.timing) continue;
    // Google Benchmark's aggregate entries (as with --benchmark_repetitions); the raw
    // samples are in results[].samples_s.
    const auto& t = *r.timing;
    const std::size_t n = t.samples.size();
    for (const char* agg : {"mean", "median", "stddev"}) {
      const double v = std::string(agg) == "mean" ? t.stats.mean : std::string(agg) == "median" ? t.stats.median : t.stats.stddev;
      nlohmann::json e = {{"name", r.name + "_" + agg},
                          {"run_name", r.name},
                          {"run_type", "aggregate"},
                          {"aggregate_name", agg},
                          {"repetitions", n},
                          {"threads", 1},
                          {"iterations", n},
                          {"real_time", v * 1e9},
                          {"cpu_time", v * 1e9},
                          {"time_unit", "ns"}};
      if (std::string(agg) != "stddev") {
        e["FLOPS"] = v > 0 ? r.work.flops / v : 0.0;
        e["bytes_per_second"] = v > 0 ? r.work.bytes / v : 0.0;
      }
      out.push_back(std::move(e));
    }
  }
  return out;
}

nlohmann::json make_report(const nlohmann::json& environment, const Suite& suite,
                           const std::vector<Result>& results) {
  nlohmann::json res = nlohmann::json::array();
  std::map<std::string, int> counts;
  for (Status s : kAllStatuses) counts[std::string(to_string(s))] = 0;
  for (const auto& r : results) {
    res.push_back(result_to_json(r));
    ++counts[std::string(to_string(r.status))];
  }
  return {{"schema", kReportSchema},
          {"schema_version", kReportSchemaVersion},
          {"environment", environment},
          {"suite", {{"name", suite.name}, {"file", suite.file}, {"description", suite.description},
                     {"settings", settings_to_json(suite.settings)}, {"cases", suite.cases.size()}}},
          {"summary", counts},
          {"results", std::move(res)},
          // Google Benchmark's reporters write a "context"; compare.py only needs benchmarks.
          {"context", {{"date", environment.value("date", "")}, {"host_name", environment.value("host", "")},
                       {"executable", "harness"}, {"library_build_type", "release"}}},
          {"benchmarks", benchmarks_json(results)}};
}

namespace {
void pretty(const nlohmann::json& j, std::size_t indent, std::string& out) {
  const std::string pad(indent + 2, ' ');
  if (j.is_object() && !j.empty()) {
    out += "{\n";
    bool first = true;
    for (const auto& [k, v] : j.items()) {
      if (!first) out += ",\n";
      first = false;
      out += pad + nlohmann::json(k).dump() + ": ";
      pretty(v, indent + 2, out);
    }
    out += '\n';
    out.append(indent, ' ');
    out += '}';
  } else if (j.is_array() && !j.empty()) {
    const bool scalars = std::all_of(j.begin(), j.end(), [](const nlohmann::json& x) { return x.is_primitive(); });
    if (scalars) {  // samples, param_order and the like: one line
      out += "[";
      for (std::size_t i = 0; i < j.size(); ++i) {
        if (i) out += ", ";
        out += j[i].dump();
      }
      out += "]";
      return;
    }
    out += "[\n";
    for (std::size_t i = 0; i < j.size(); ++i) {
      if (i) out += ",\n";
      out += pad;
      pretty(j[i], indent + 2, out);
    }
    out += '\n';
    out.append(indent, ' ');
    out += ']';
  } else {
    out += j.dump();
  }
}
}  // namespace

std::string report_text(const nlohmann::json& report) {
  std::string out;
  pretty(report, 0, out);
  return out + "\n";
}

void write_file_atomically(const std::string& path, const std::string& text) {
  namespace fs = std::filesystem;
  const fs::path target(path);
  const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  std::error_code ec;
  if (!dir.empty()) fs::create_directories(dir, ec);
  const std::string tmp = (dir / fmt::format(".{}.tmp{}", target.filename().string(), getpid())).string();
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) throw InputError(fmt::format("{}: cannot write the report: {}", path, std::strerror(errno)));
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0) {
      const int err = errno;
      ::close(fd);
      ::unlink(tmp.c_str());
      throw InputError(fmt::format("{}: cannot write the report: {}", path, std::strerror(err)));
    }
    done += static_cast<std::size_t>(n);
  }
  ::fsync(fd);
  ::close(fd);
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    throw InputError(fmt::format("{}: cannot write the report: {}", path, std::strerror(err)));
  }
}

std::vector<Result> read_journal(const std::string& path, bool strict) {
  std::vector<Result> out;
  std::ifstream in(path);
  if (!in) {
    if (strict) throw InputError(fmt::format("{}: cannot open the journal to resume: {}", path, std::strerror(errno)));
    return out;
  }
  std::string line;
  std::size_t number = 0;
  while (std::getline(in, line)) {
    ++number;
    if (line.empty()) continue;
    const auto j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_discarded()) {
      if (in.peek() == EOF) break;  // the last line was cut by the kill
      if (!strict) continue;
      throw InputError(fmt::format("{}:{}: not a journal line (invalid JSON)", path, number));
    }
    const bool event = j.is_object() && j.contains("event");
    if (event && (events::kind(j) != events::kResult || !j.contains("result"))) continue;
    try {
      out.push_back(result_from_json(event ? j["result"] : j));
    } catch (const nlohmann::json::exception& e) {
      if (strict) throw InputError(fmt::format("{}:{}: not a journal entry: {}", path, number, e.what()));
    }
  }
  return out;
}

Journal::Journal(std::string path, bool fresh) : path_(std::move(path)) {
  namespace fs = std::filesystem;
  const fs::path p(path_);
  std::error_code ec;
  if (p.has_parent_path()) fs::create_directories(p.parent_path(), ec);
  fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_APPEND | (fresh ? O_TRUNC : 0), 0644);
  if (fd_ < 0) throw InputError(fmt::format("{}: cannot open the journal: {}", path_, std::strerror(errno)));
}

Journal::~Journal() {
  if (fd_ >= 0) ::close(fd_);
}

void Journal::append(const nlohmann::json& entry) {
  const std::string line = entry.dump() + "\n";
  // One write per line: O_APPEND keeps lines whole; fdatasync makes them survive a kill.
  if (::write(fd_, line.data(), line.size()) != static_cast<ssize_t>(line.size()))
    throw InputError(fmt::format("{}: cannot append to the journal: {}", path_, std::strerror(errno)));
  ::fdatasync(fd_);
}

nlohmann::json read_report(const std::string& path) {
  const std::string text = read_text_file(path, "report");
  nlohmann::json j;
  // Nesting deeper than any report's is refused while parsing: copying, comparing and
  // printing JSON recurse, and a hostile file of nested brackets would exhaust the stack.
  constexpr int kMaxDepth = 128;
  bool too_deep = false;
  const nlohmann::json::parser_callback_t limit_depth = [&](int depth, nlohmann::json::parse_event_t, nlohmann::json&) {
    if (depth > kMaxDepth) too_deep = true;
    return !too_deep;
  };
  try {
    j = nlohmann::json::parse(text, limit_depth);
  } catch (const nlohmann::json::parse_error& e) {
    throw InputError(fmt::format("{}: not valid JSON (truncated or corrupt?): byte {}: {}", path, e.byte,
                                 std::string(e.what()).substr(std::string(e.what()).find(':') + 2)));
  } catch (const nlohmann::json::exception& e) {  // out_of_range: a number beyond double ("1e999")
    throw InputError(fmt::format("{}: not valid JSON (corrupt?): {}", path,
                                 std::string(e.what()).substr(std::string(e.what()).find(']') + 2)));
  }
  if (too_deep) throw InputError(fmt::format("{}: JSON nested deeper than {} levels: not a report", path, kMaxDepth));
  if (!j.is_object()) throw InputError(fmt::format("{}: a report is a JSON object", path));
  if (j.contains("schema") && !j["schema"].is_string())
    throw InputError(fmt::format("{}: not a harness report ('schema' is not a string)", path));
  if (j.value("schema", "") != kReportSchema) {
    if (j.contains("benchmarks") && j["benchmarks"].is_array()) return j;  // Google Benchmark JSON
    throw InputError(fmt::format("{}: not a harness report (schema '{}')", path, j.value("schema", "")));
  }
  if (!j.contains("schema_version") || !j["schema_version"].is_number_integer())
    throw InputError(fmt::format("{}: report has no valid schema_version", path));
  const auto version = j["schema_version"].get<std::int64_t>();
  if (version > kReportSchemaVersion)
    throw InputError(fmt::format("{}: report schema version {} is newer than this harness understands ({}); update the harness",
                                 path, version, kReportSchemaVersion));
  if (version < 1) throw InputError(fmt::format("{}: report has no valid schema_version", path));
  if (!j.contains("results") || !j["results"].is_array())
    throw InputError(fmt::format("{}: report has no 'results' array", path));
  return j;
}

std::string default_report_path(const std::string& suite_name) {
  std::string stamp = utc_timestamp();  // 2026-11-22T03:04:05Z -> 20261122T030405Z
  std::erase(stamp, ':');
  std::erase(stamp, '-');
  return fmt::format("reports/run-{}-{}.json", suite_name, stamp);
}

}  // namespace harness
