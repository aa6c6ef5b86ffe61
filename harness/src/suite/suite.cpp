#include "suite/suite.hpp"

#include <charconv>
#include <cstring>
#include <cmath>
#include <fstream>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <yaml-cpp/yaml.h>

#include "harness/error.hpp"
#include "profile/metrics.hpp"
#include "core/suggest.hpp"

namespace harness {

std::string Case::id() const {
  std::string out = problem->name();
  for (const auto& [n, v] : params.entries()) out += fmt::format("/{}:{}", n, to_string(v));
  return out;
}

std::string result_name(const Case& c, const Variant& v) {
  std::string out = c.problem->name() + "/" + v.name;
  for (const auto& [n, val] : c.params.entries()) out += fmt::format("/{}:{}", n, to_string(val));
  return out;
}

namespace {

// Why a problem refuses these parameters: its own cross-parameter rules, then sizes
// whose byte counts overflow 64 bits (operands, or the problem's own count).
std::optional<std::string> rejects(const Problem& problem, const Params& params) {
  if (auto why = problem.reject(params)) return why;
  try {
    (void)memory_need(problem, params);
  } catch (const InputError& e) {
    return e.what();
  }
  return std::nullopt;
}

}  // namespace

namespace {

// Sweeps larger than this are almost certainly a mistake (a range with a tiny step); it
// also bounds the cases of a whole suite (YAML aliases can repeat a sweep cheaply).
constexpr std::size_t kMaxSweep = 100000;

class Loader {
 public:
  Loader(std::string filename, const Registry& registry) : file_(std::move(filename)), registry_(registry) {}

  Suite load(std::string_view text) {
    YAML::Node root;
    try {
      root = YAML::Load(std::string(text));
    } catch (const YAML::ParserException& e) {
      throw InputError(fmt::format("{}:{}:{}: YAML syntax error: {}", file_, e.mark.line + 1,
                                   e.mark.column + 1, e.msg));
    }
    if (!root || root.IsNull()) throw InputError(fmt::format("{}:1:1: the suite is empty", file_));
    if (!root.IsMap()) fail(root, "a suite is a map with keys 'suite', 'settings' and 'cases'");
    check_keys(root, {"suite", "description", "settings", "metrics", "cases"}, "suite");

    Suite suite;
    suite.file = file_;
    suite.name = root["suite"] ? scalar(root["suite"], "suite") : default_name();
    // The name is part of the default report path (reports/run-<suite>-<time>.json): a
    // '/' or '\\' in it would write elsewhere, e.g. 'suite: ../../etc/x'.
    if (suite.name.find_first_of("/\\") != std::string::npos)
      fail(root["suite"] ? root["suite"] : root, fmt::format("suite name '{}' contains '/' or '\\': it names the default report "
                                      "reports/run-<suite>-<time>.json, so it must be a plain name",
                                      suite.name));
    if (root["description"]) suite.description = scalar(root["description"], "description");
    if (root["settings"]) read_settings(root["settings"], suite.settings, &suite.trace);
    if (root["metrics"]) suite.metrics = metric_list(root["metrics"]);
    const YAML::Node cases = root["cases"];
    if (!cases) fail(root, "the suite has no 'cases'");
    if (!cases.IsSequence() || cases.size() == 0) fail(cases, "'cases' must be a non-empty list");
    for (const auto& c : cases) read_case(c, suite);
    return suite;
  }

 private:
  std::string file_;
  const Registry& registry_;

  std::string where(const YAML::Node& node) const {
    const YAML::Mark m = node.Mark();
    if (m.line < 0) return file_;
    return fmt::format("{}:{}:{}", file_, m.line + 1, m.column + 1);
  }
  [[noreturn]] void fail(const YAML::Node& node, const std::string& message) const {
    throw InputError(fmt::format("{}: {}", where(node), message));
  }

  std::string default_name() const {
    std::string base = file_.substr(file_.find_last_of('/') + 1);
    return base.substr(0, base.find('.'));
  }

  // A map key as text; a key that is itself a list or a map is an error at the key.
  std::string key_text(const YAML::Node& key) const {
    if (!key.IsScalar()) fail(key, "a key must be a plain name, not a list or a map");
    return key.Scalar();
  }

  // yaml-cpp keeps both pairs of a repeated key ({n: 1000, n: 2000}) and node[key] finds
  // the first, so the second would be dropped without a word: an error at the second.
  void check_unique_keys(const YAML::Node& map) const {
    std::vector<std::string> seen;
    for (const auto& kv : map) {
      const std::string key = key_text(kv.first);
      if (std::find(seen.begin(), seen.end(), key) != seen.end())
        fail(kv.first, fmt::format("duplicate key '{}' (each key of a map may appear once)", key));
      seen.push_back(key);
    }
  }

  void check_keys(const YAML::Node& map, const std::vector<std::string>& allowed, std::string_view what) const {
    check_unique_keys(map);
    for (const auto& kv : map) {
      const std::string key = key_text(kv.first);
      if (std::find(allowed.begin(), allowed.end(), key) == allowed.end())
        fail(kv.first, fmt::format("unknown key '{}' in {}{}", key, what,
                                   did_you_mean(key, allowed).empty()
                                       ? fmt::format(" (expected one of: {})", fmt::join(allowed, ", "))
                                       : did_you_mean(key, allowed)));
    }
  }

  std::string scalar(const YAML::Node& node, std::string_view what) const {
    if (!node.IsScalar()) fail(node, fmt::format("'{}' must be a single value", what));
    return node.Scalar();
  }

  std::vector<std::string> string_list(const YAML::Node& node, std::string_view what) const {
    std::vector<std::string> out;
    if (node.IsScalar()) return {node.Scalar()};
    if (!node.IsSequence()) fail(node, fmt::format("'{}' must be a list", what));
    for (const auto& item : node) out.push_back(scalar(item, what));
    return out;
  }

  // Counter names are checked against the chip's metric list (offline, no GPU needed).
  std::vector<std::string> metric_list(const YAML::Node& node) const {
    auto out = string_list(node, "metrics");
    for (std::size_t i = 0; i < out.size(); ++i)
      if (auto why = MetricCollector::validate_metric(out[i])) fail(node.IsSequence() ? node[i] : node, *why);
    return out;
  }

  std::optional<std::int64_t> parse_int(const std::string& s) const {
    std::int64_t v = 0;
    const char* end = s.data() + s.size();
    auto [ptr, ec] = std::from_chars(s.data(), end, v);
    if (ec == std::errc() && ptr == end) return v;
    // 1e6-style integers are common in suites; accept them when exact.
    if (auto d = parse_double(s); d && std::floor(*d) == *d && std::abs(*d) < 9.2e18)
      return static_cast<std::int64_t>(*d);
    return std::nullopt;
  }
  std::optional<double> parse_double(const std::string& s) const {
    if (s.empty()) return std::nullopt;
    std::istringstream in(s);
    in.imbue(std::locale::classic());
    double v = 0;
    in >> v;
    if (!in.fail() && in.eof()) return v;
    return std::nullopt;
  }

  double number(const YAML::Node& node, std::string_view what, double lo, double hi) const {
    const std::string s = scalar(node, what);
    const auto v = parse_double(s);
    if (!v) fail(node, fmt::format("'{}' expects a number, got '{}'", what, s));
    if (*v < lo || *v > hi) fail(node, fmt::format("'{}' = {} is out of range [{:g}, {:g}]", what, s, lo, hi));
    return *v;
  }
  int integer(const YAML::Node& node, std::string_view what, std::int64_t lo, std::int64_t hi) const {
    const std::string s = scalar(node, what);
    const auto v = parse_int(s);
    if (!v) fail(node, fmt::format("'{}' expects an integer, got '{}'", what, s));
    if (*v < lo || *v > hi) fail(node, fmt::format("'{}' = {} is out of range [{}, {}]", what, s, lo, hi));
    return static_cast<int>(*v);
  }

  // `trace` (suite level only): where `harness run` writes the timeline of the profiling
  // pass, as --trace does.
  void read_settings(const YAML::Node& node, MeasureSettings& s, std::string* trace = nullptr) const {
    if (!node.IsMap()) fail(node, "'settings' must be a map");
    const std::vector<std::string> keys = {"warmup", "min_samples", "min_time", "max_time", "noise", "cache",
                                           "timeout", "timing", "stopping", "throttle", "steady",
                                           "interleave", "interleave_order"};
    if (trace) {
      std::vector<std::string> with_trace = keys;
      with_trace.push_back("trace");
      check_keys(node, with_trace, "settings");
      if (node["trace"]) {
        *trace = scalar(node["trace"], "trace");
        if (trace->empty()) fail(node["trace"], "'trace' must be a file path such as trace.json");
        if (trace->size() < 5 || trace->compare(trace->size() - 5, 5, ".json") != 0)
          fail(node["trace"], fmt::format("'trace' = '{}': the timeline is Chrome Trace Event JSON; give a path ending in .json", *trace));
      }
    } else {
      if (node["trace"]) fail(node["trace"], "'trace' is a suite setting (the whole run's timeline), not a case setting");
      check_keys(node, keys, "settings");
    }
    if (node["warmup"]) s.warmup = integer(node["warmup"], "warmup", 0, 100000);
    if (node["min_samples"]) s.min_samples = integer(node["min_samples"], "min_samples", 1, 1000000);
    if (node["min_time"]) s.min_time = number(node["min_time"], "min_time", 0, 86400);
    if (node["max_time"]) s.max_time = number(node["max_time"], "max_time", 1e-6, 86400);
    if (node["noise"]) s.noise = number(node["noise"], "noise", 0, 1);
    if (node["timeout"]) s.timeout = number(node["timeout"], "timeout", 0, 86400);
    if (node["cache"]) {
      const std::string c = scalar(node["cache"], "cache");
      if (c == "hot") s.cache = CacheMode::hot;
      else if (c == "cold") s.cache = CacheMode::cold;
      else fail(node["cache"], fmt::format("'cache' must be 'hot' or 'cold', got '{}'{}", c, did_you_mean(c, {"hot", "cold"})));
    }
    if (node["timing"]) {
      const std::string t = scalar(node["timing"], "timing");
      if (t == "events") s.timing = TimingMode::events;
      else if (t == "graph") s.timing = TimingMode::graph;
      else fail(node["timing"], fmt::format("'timing' must be 'events' or 'graph', got '{}'{}", t, did_you_mean(t, {"events", "graph"})));
    }
    if (node["throttle"]) {
      s.throttle = number(node["throttle"], "throttle", 0, 1);
      if (s.throttle <= 0) fail(node["throttle"], "'throttle' must be in (0, 1]: a share of the maximum SM clock");
    }
    if (node["stopping"]) read_stopping(node["stopping"], s.stopping);
    if (node["steady"]) {
      const std::string v = scalar(node["steady"], "steady");
      if (v == "true") s.steady = true;
      else if (v == "false") s.steady = false;
      else fail(node["steady"], fmt::format("'steady' must be true or false, got '{}'", v));
    }
    if (node["interleave"]) {
      const std::string v = scalar(node["interleave"], "interleave");
      if (v == "true") s.interleave = true;
      else if (v == "false") s.interleave = false;
      else fail(node["interleave"], fmt::format("'interleave' must be true or false, got '{}'", v));
    }
    if (node["interleave_order"]) {
      const std::string v = scalar(node["interleave_order"], "interleave_order");
      const auto order = round_order_from_string(v);
      if (!order)
        fail(node["interleave_order"], fmt::format("'interleave_order' must be shuffled or fixed, got '{}'{}", v,
                                                   did_you_mean(v, {"shuffled", "fixed"})));
      s.round_order = *order;
    }
    if (s.max_time < s.min_time)
      fail(node, fmt::format("max_time ({:g} s) is shorter than min_time ({:g} s)", s.max_time, s.min_time));
  }

  // stopping: entropy   or   stopping: {rule: samples, samples: 200}
  //           {rule: entropy, max_angle: 0.048, min_r2: 0.36}
  void read_stopping(const YAML::Node& node, StoppingSettings& st) const {
    const std::vector<std::string> rules = {"noise", "entropy", "samples"};
    auto rule = [&](const YAML::Node& n) {
      const std::string r = scalar(n, "rule");
      if (auto v = stopping_rule_from_string(r)) return *v;
      fail(n, fmt::format("unknown stopping rule '{}': expected noise, entropy or samples{}", r, did_you_mean(r, rules)));
    };
    if (node.IsScalar()) {
      st.rule = rule(node);
      return;
    }
    if (!node.IsMap()) fail(node, "'stopping' must be a rule name or a map {rule: ..., ...}");
    check_keys(node, {"rule", "samples", "max_angle", "min_r2"}, "stopping");
    if (node["rule"]) st.rule = rule(node["rule"]);
    if (node["samples"]) st.samples = integer(node["samples"], "samples", 1, 10000);
    if (node["max_angle"]) st.max_angle = number(node["max_angle"], "max_angle", 0, 90);
    if (node["min_r2"]) st.min_r2 = number(node["min_r2"], "min_r2", 0, 1);
  }

  // One scalar as a value of `spec`'s type; errors are located at the scalar.
  ParamValue typed_value(const YAML::Node& node, const ParamSpec& spec) const {
    if (!node.IsScalar()) fail(node, fmt::format("a value of '{}' must be a scalar, a list, or {{range: ...}} / {{pow2: ...}}", spec.name));
    const std::string s = node.Scalar();
    ParamValue v;
    switch (spec.type) {
      case ParamType::integer: {
        const auto i = parse_int(s);
        if (!i) fail(node, fmt::format("'{}' expects an integer, got '{}'", spec.name, s));
        v = *i;
        break;
      }
      case ParamType::real: {
        const auto d = parse_double(s);
        if (!d) fail(node, fmt::format("'{}' expects a number, got '{}'", spec.name, s));
        v = *d;
        break;
      }
      case ParamType::boolean:
        if (s == "true" || s == "True" || s == "yes" || s == "on") v = true;
        else if (s == "false" || s == "False" || s == "no" || s == "off") v = false;
        else fail(node, fmt::format("'{}' expects true or false, got '{}'", spec.name, s));
        break;
      case ParamType::string:
        v = s;
        break;
      case ParamType::enumeration:
        v = s;
        if (spec.reject(v)) fail(node, *spec.reject(v) + did_you_mean(s, spec.choices));
        break;
    }
    if (auto why = spec.reject(v)) fail(node, *why);
    return v;
  }

  std::vector<ParamValue> sweep_values(const YAML::Node& node, const ParamSpec& spec) const {
    std::vector<ParamValue> out;
    if (node.IsScalar()) {
      out.push_back(typed_value(node, spec));
    } else if (node.IsSequence()) {
      if (node.size() == 0) fail(node, fmt::format("the sweep of '{}' is empty", spec.name));
      for (const auto& item : node) out.push_back(typed_value(item, spec));
    } else if (node.IsMap()) {
      check_unique_keys(node);
      if (node.size() != 1) fail(node, fmt::format("a sweep of '{}' is one of {{range: [start, stop, step]}} or {{pow2: [lo, hi]}}", spec.name));
      const std::string kind = key_text(node.begin()->first);
      const YAML::Node args = node.begin()->second;
      if (kind == "range") out = range_values(args, spec);
      else if (kind == "pow2") out = pow2_values(args, spec);
      else fail(node.begin()->first, fmt::format("unknown sweep '{}'{} (expected 'range' or 'pow2')", kind, did_you_mean(kind, {"range", "pow2"})));
      if (out.empty()) fail(node, fmt::format("the sweep of '{}' is empty", spec.name));
    } else {
      fail(node, fmt::format("'{}' has no value", spec.name));
    }
    return out;
  }

  std::vector<ParamValue> range_values(const YAML::Node& args, const ParamSpec& spec) const {
    if (spec.type != ParamType::integer && spec.type != ParamType::real)
      fail(args, fmt::format("'range' needs a numeric parameter; '{}' is {}", spec.name, to_string(spec.type)));
    if (!args.IsSequence() || args.size() < 2 || args.size() > 3)
      fail(args, "'range' takes [start, stop] or [start, stop, step] (stop included)");
    std::vector<ParamValue> out;
    if (spec.type == ParamType::integer) {
      const auto start = std::get<std::int64_t>(typed_value(args[0], spec));
      const auto stop = std::get<std::int64_t>(typed_value(args[1], spec));
      std::int64_t step = 1;
      if (args.size() == 3) {
        const auto s = parse_int(args[2].Scalar());
        if (!s || *s <= 0) fail(args[2], fmt::format("the step of a range must be a positive integer, got '{}'", args[2].Scalar()));
        step = *s;
      }
      if (stop < start) fail(args, fmt::format("the range of '{}' is empty: stop {} < start {}", spec.name, stop, start));
      // In unsigned arithmetic: stop - start and start + k * step may not fit in int64.
      const std::uint64_t span = static_cast<std::uint64_t>(stop) - static_cast<std::uint64_t>(start);
      const std::uint64_t steps = span / static_cast<std::uint64_t>(step);
      if (steps >= kMaxSweep)
        fail(args, fmt::format("the range of '{}' has more than {} values", spec.name, kMaxSweep));
      for (std::uint64_t k = 0; k <= steps; ++k)
        out.emplace_back(static_cast<std::int64_t>(static_cast<std::uint64_t>(start) + k * static_cast<std::uint64_t>(step)));
    } else {
      const double start = std::get<double>(typed_value(args[0], spec));
      const double stop = std::get<double>(typed_value(args[1], spec));
      double step = 1;
      if (args.size() == 3) {
        const auto s = parse_double(args[2].Scalar());
        if (!s || *s <= 0) fail(args[2], fmt::format("the step of a range must be a positive number, got '{}'", args[2].Scalar()));
        step = *s;
      }
      if (stop < start) fail(args, fmt::format("the range of '{}' is empty: stop {:g} < start {:g}", spec.name, stop, start));
      if ((stop - start) / step >= static_cast<double>(kMaxSweep))
        fail(args, fmt::format("the range of '{}' has more than {} values", spec.name, kMaxSweep));
      // Count steps rather than accumulate, so 0.1-steps do not drift past stop.
      const auto count = static_cast<std::int64_t>(std::floor((stop - start) / step + 1e-9));
      for (std::int64_t i = 0; i <= count; ++i) out.emplace_back(start + static_cast<double>(i) * step);
    }
    return out;
  }

  std::vector<ParamValue> pow2_values(const YAML::Node& args, const ParamSpec& spec) const {
    if (spec.type != ParamType::integer)
      fail(args, fmt::format("'pow2' needs an integer parameter; '{}' is {}", spec.name, to_string(spec.type)));
    if (!args.IsSequence() || args.size() != 2) fail(args, "'pow2' takes [lo, hi]: the powers of two from lo to hi");
    const auto lo = std::get<std::int64_t>(typed_value(args[0], spec));
    const auto hi = std::get<std::int64_t>(typed_value(args[1], spec));
    auto is_pow2 = [](std::int64_t v) { return v > 0 && (v & (v - 1)) == 0; };
    if (!is_pow2(lo)) fail(args[0], fmt::format("{} is not a power of two", lo));
    if (!is_pow2(hi)) fail(args[1], fmt::format("{} is not a power of two", hi));
    if (hi < lo) fail(args, fmt::format("the pow2 sweep of '{}' is empty: {} > {}", spec.name, lo, hi));
    std::vector<ParamValue> out;
    for (std::int64_t v = lo;; v *= 2) {
      out.emplace_back(v);
      if (v > hi / 2) break;  // v * 2 > hi (and v * 2 may not fit)
    }
    return out;
  }

  // One params map: the cartesian product of its sweeps, in the problem's declaration order.
  std::vector<Params> expand(const YAML::Node& map, const Problem& problem) const {
    if (!map.IsMap()) fail(map, "'params' must be a map of parameter values, or a list of such maps");
    const auto specs = problem.params();
    std::vector<std::string> names;
    for (const auto& s : specs) names.push_back(s.name);
    check_unique_keys(map);
    for (const auto& kv : map) {
      const std::string key = key_text(kv.first);
      if (std::find(names.begin(), names.end(), key) == names.end())
        fail(kv.first, fmt::format("problem '{}' has no parameter '{}'{}", problem.name(), key,
                                   did_you_mean(key, names).empty() ? fmt::format(" (it has: {})", fmt::join(names, ", ")) : did_you_mean(key, names)));
    }
    std::vector<Params> out{Params{}};
    for (const auto& spec : specs) {
      const YAML::Node v = map[spec.name];
      if (!v) continue;
      const auto values = sweep_values(v, spec);
      if (values.size() > kMaxSweep / out.size())
        fail(map, fmt::format("the parameter sweep expands to more than {} cases", kMaxSweep));
      std::vector<Params> next;
      for (const auto& partial : out)
        for (const auto& value : values) {
          Params p = partial;
          p.set(spec.name, value);
          next.push_back(std::move(p));
        }
      if (next.size() > kMaxSweep) fail(map, fmt::format("the parameter sweep expands to more than {} cases", kMaxSweep));
      out = std::move(next);
    }
    for (auto& p : out) p = with_defaults(specs, p);
    return out;
  }

  const Variant* variant_named(const YAML::Node& node, const Problem& problem) const {
    const std::string name = scalar(node, "variants");
    if (const Variant* v = registry_.find_variant(problem.name(), name)) return v;
    fail(node, fmt::format("unknown variant '{}' of problem '{}'{}", name, problem.name(),
                           did_you_mean(name, registry_.variant_names(problem.name())).empty()
                               ? fmt::format(" (it has: {})", fmt::join(registry_.variant_names(problem.name()), ", "))
                               : did_you_mean(name, registry_.variant_names(problem.name()))));
  }

  void read_case(const YAML::Node& node, Suite& suite) const {
    if (!node.IsMap()) fail(node, "each case is a map with 'problem', 'params' and 'variants'");
    check_keys(node, {"name", "problem", "params", "variants", "reference", "tolerance", "settings", "metrics"}, "case");
    if (!node["problem"]) fail(node, "the case has no 'problem'");
    const std::string pname = scalar(node["problem"], "problem");
    const Problem* problem = registry_.find_problem(pname);
    if (!problem)
      fail(node["problem"], fmt::format("unknown problem '{}'{}", pname,
                                        did_you_mean(pname, registry_.problem_names()).empty()
                                            ? fmt::format(" (known: {})", fmt::join(registry_.problem_names(), ", "))
                                            : did_you_mean(pname, registry_.problem_names())));
    Case proto;
    proto.problem = problem;
    proto.location = where(node);
    proto.name = node["name"] ? scalar(node["name"], "name") : pname;
    proto.settings = suite.settings;
    proto.metrics = suite.metrics;
    if (node["settings"]) read_settings(node["settings"], proto.settings);
    if (node["metrics"]) proto.metrics = metric_list(node["metrics"]);

    const YAML::Node vnode = node["variants"];
    if (!vnode || (vnode.IsScalar() && vnode.Scalar() == "all")) {
      for (const Variant* v : registry_.variants(pname))
        if (!v->reference_only) proto.variants.push_back(v);
    } else if (vnode.IsSequence()) {
      if (vnode.size() == 0) fail(vnode, "'variants' is empty (write 'all' or list names)");
      std::set<std::string> seen;
      for (const auto& item : vnode) {
        const Variant* v = variant_named(item, *problem);
        if (!seen.insert(v->name).second) fail(item, fmt::format("variant '{}' is listed twice", v->name));
        proto.variants.push_back(v);
      }
    } else if (vnode.IsScalar()) {
      proto.variants.push_back(variant_named(vnode, *problem));
    } else {
      fail(vnode, "'variants' must be 'all' or a list of variant names");
    }
    if (proto.variants.empty()) fail(node, fmt::format("problem '{}' has no registered variants", pname));

    if (node["reference"]) {
      const Variant* ref = variant_named(node["reference"], *problem);
      proto.reference = ref->name;
    }
    if (node["tolerance"]) {
      const YAML::Node t = node["tolerance"];
      if (!t.IsMap()) fail(t, "'tolerance' must be a map {abs: A, rel: R} (optionally rel_l2: L)");
      check_keys(t, {"abs", "rel", "rel_l2"}, "tolerance");
      Tolerance tol;
      if (t["abs"]) tol.abs = number(t["abs"], "abs", 0, 1e300);
      if (t["rel"]) tol.rel = number(t["rel"], "rel", 0, 1e300);
      if (t["rel_l2"]) tol.rel_l2 = number(t["rel_l2"], "rel_l2", 0, 1e300);
      proto.tolerance = tol;
    }

    std::vector<Params> all;
    const YAML::Node params = node["params"];
    if (!params) {
      if (suite.cases.size() + 1 > kMaxSweep) fail(node, fmt::format("the suite expands to more than {} cases", kMaxSweep));
      all.push_back(with_defaults(problem->params(), Params{}));
    } else if (params.IsSequence()) {
      if (params.size() == 0) fail(params, "'params' is an empty list");
      for (const auto& m : params) {
        auto part = expand(m, *problem);
        if (suite.cases.size() + all.size() + part.size() > kMaxSweep)
          fail(m, fmt::format("the suite expands to more than {} cases", kMaxSweep));
        for (auto& p : part) {
          if (auto why = rejects(*problem, p)) fail(m, fmt::format("{} ({})", *why, p.describe()));
          all.push_back(std::move(p));
        }
      }
    } else {
      all = expand(params, *problem);
      if (suite.cases.size() + all.size() > kMaxSweep)
        fail(params, fmt::format("the suite expands to more than {} cases", kMaxSweep));
      for (const auto& p : all)
        if (auto why = rejects(*problem, p)) fail(params, fmt::format("{} ({})", *why, p.describe()));
    }
    for (auto& p : all) {
      Case c = proto;
      c.params = std::move(p);
      // Unset by the suite: the default for this case's parameters (types/settings.hpp).
      if (!c.settings.steady) c.settings.steady = steady_by_default(c.params);
      if (!c.settings.interleave) c.settings.interleave = interleave_by_default(c.params);
      suite.cases.push_back(std::move(c));
    }
  }
};

}  // namespace

Suite parse_suite(std::string_view yaml, const std::string& filename, const Registry& registry) {
  return Loader(filename, registry).load(yaml);
}

Suite load_suite(const std::string& path, const Registry& registry) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(fmt::format("{}: cannot open suite file: {}", path, std::strerror(errno)));
  std::ostringstream text;
  text << in.rdbuf();
  return parse_suite(text.str(), path, registry);
}

Suite load_suites(const std::vector<std::string>& paths, const Registry& registry) {
  std::vector<Suite> suites;
  for (const auto& path : paths) suites.push_back(load_suite(path, registry));
  if (suites.size() == 1) return std::move(suites.front());
  Suite all;
  std::vector<std::string> names, files;
  for (auto& s : suites) {
    names.push_back(s.name);
    files.push_back(s.file);
    for (auto& c : s.cases) all.cases.push_back(std::move(c));
  }
  all.name = fmt::format("{}", fmt::join(names, "+"));
  all.file = fmt::format("{}", fmt::join(files, ","));
  all.settings = suites.front().settings;
  for (const auto& s : suites)
    if (all.trace.empty()) all.trace = s.trace;
  return all;
}

}  // namespace harness
