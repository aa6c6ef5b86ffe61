#include "report/report.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include <fmt/format.h>

#include "run/environment.hpp"
#include "harness/error.hpp"

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
          {"timeout_s", s.timeout}};
}

nlohmann::json result_to_json(const Result& r) {
  nlohmann::json j = {{"name", r.name},
                      {"case", r.case_name},
                      {"problem", r.problem},
                      {"variant", r.variant},
                      {"backend", r.backend},
                      {"params", params_json(r.params)},
                      {"status", std::string(to_string(r.status))},
                      {"reason", r.reason},
                      {"reference", r.reference},
                      {"work", {{"flops", r.work.flops}, {"bytes", r.work.bytes}}},
                      {"memory", {{"io_device_bytes", r.io_device_bytes}, {"workspace_peak_bytes", r.workspace_peak_bytes}}},
                      {"settings", settings_to_json(r.settings)}};
  j["profile"] = r.profile;
  if (!r.extra.is_null()) j["extra"] = r.extra;
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
                  {"sampled", c.sampled},
                  {"worst", c.worst}};
  } else {
    j["check"] = nullptr;
  }
  if (r.timing) {
    const Timing& t = *r.timing;
    const Stats& s = t.stats;
    j["samples_s"] = t.samples;
    j["stats"] = {{"count", s.count},   {"min_s", s.min},       {"max_s", s.max},
                  {"mean_s", s.mean},   {"median_s", s.median}, {"stddev_s", s.stddev},
                  {"q1_s", s.q1},       {"q3_s", s.q3},         {"rel_noise", s.rel_noise},
                  {"noise_reached", t.noise_reached}, {"stop_reason", t.stop_reason},
                  {"wall_time_s", t.wall_time}};
    j["rates"] = {{"gflops", r.gflops}, {"gbytes_per_s", r.gbytes_per_s}, {"arithmetic_intensity", r.intensity}};
  } else {
    j["samples_s"] = nlohmann::json::array();
    j["stats"] = nullptr;
    j["rates"] = nullptr;
  }
  return j;
}

namespace {
ParamValue param_from_json(const nlohmann::json& v) {
  if (v.is_boolean()) return v.get<bool>();
  if (v.is_number_integer()) return v.get<std::int64_t>();
  if (v.is_number()) return v.get<double>();
  return v.get<std::string>();
}
}  // namespace

Result result_from_json(const nlohmann::json& j) {
  Result r;
  r.name = j.at("name").get<std::string>();
  r.case_name = j.value("case", "");
  r.problem = j.at("problem").get<std::string>();
  r.variant = j.at("variant").get<std::string>();
  r.backend = j.value("backend", "");
  for (const auto& [k, v] : j.at("params").items()) r.params.set(k, param_from_json(v));
  r.status = status_from_string(j.at("status").get<std::string>()).value_or(Status::error);
  r.reason = j.value("reason", "");
  r.reference = j.value("reference", "");
  if (j.contains("work")) r.work = {j["work"].value("flops", 0.0), j["work"].value("bytes", 0.0)};
  if (j.contains("memory")) {
    r.io_device_bytes = j["memory"].value("io_device_bytes", std::size_t{0});
    r.workspace_peak_bytes = j["memory"].value("workspace_peak_bytes", std::size_t{0});
  }
  if (j.contains("settings")) {
    const auto& s = j["settings"];
    r.settings.warmup = s.value("warmup", r.settings.warmup);
    r.settings.min_samples = s.value("min_samples", r.settings.min_samples);
    r.settings.min_time = s.value("min_time_s", r.settings.min_time);
    r.settings.max_time = s.value("max_time_s", r.settings.max_time);
    r.settings.noise = s.value("noise", r.settings.noise);
    r.settings.cache = s.value("cache", "cold") == "hot" ? CacheMode::hot : CacheMode::cold;
    r.settings.timeout = s.value("timeout_s", 0.0);
  }
  if (j.contains("check") && j["check"].is_object()) {
    const auto& c = j["check"];
    CheckResult k;
    k.passed = c.value("passed", false);
    k.elements = c.value("elements", std::size_t{0});
    k.mismatches = c.value("mismatches", std::size_t{0});
    k.nonfinite = c.value("nonfinite", std::size_t{0});
    k.unwritten = c.value("unwritten", std::size_t{0});
    k.max_abs_error = c.value("max_abs_error", 0.0);
    k.rel_l2_error = c.value("rel_l2_error", 0.0);
    if (c.contains("tolerance")) k.tolerance = {c["tolerance"].value("abs", 0.0), c["tolerance"].value("rel", 0.0)};
    k.sampled = c.value("sampled", false);
    k.worst = c.value("worst", "");
    r.check = k;
  }
  if (j.contains("stats") && j["stats"].is_object()) {
    Timing t;
    t.samples = j.value("samples_s", std::vector<double>{});
    t.stats = compute_stats(t.samples);
    t.noise_reached = j["stats"].value("noise_reached", false);
    t.stop_reason = j["stats"].value("stop_reason", "");
    t.wall_time = j["stats"].value("wall_time_s", 0.0);
    r.timing = t;
  }
  if (j.contains("profile")) r.profile = j["profile"];
  if (j.contains("extra")) r.extra = j["extra"];
  if (j.contains("rates") && j["rates"].is_object()) {
    r.gflops = j["rates"].value("gflops", 0.0);
    r.gbytes_per_s = j["rates"].value("gbytes_per_s", 0.0);
    r.intensity = j["rates"].value("arithmetic_intensity", 0.0);
  }
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

void write_file_atomically(const std::string& path, const std::string& text) {
  namespace fs = std::filesystem;
  const fs::path target(path);
  const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  std::error_code ec;
  if (!dir.empty()) fs::create_directories(dir, ec);
  const std::string tmp = (dir / ("." + target.filename().string() + ".tmp" + std::to_string(getpid()))).string();
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

Journal::Journal(std::string path) : path_(std::move(path)) {
  namespace fs = std::filesystem;
  const fs::path p(path_);
  std::error_code ec;
  if (p.has_parent_path()) fs::create_directories(p.parent_path(), ec);
  fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
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
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(fmt::format("{}: cannot open report: {}", path, std::strerror(errno)));
  std::ostringstream text;
  text << in.rdbuf();
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
    j = nlohmann::json::parse(text.str(), limit_depth);
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
