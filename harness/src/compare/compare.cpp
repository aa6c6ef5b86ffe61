#include "compare/compare.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include <fmt/format.h>

#include "harness/error.hpp"
#include "harness/registry.hpp"
#include "compare/mann_whitney.hpp"
#include "core/units.hpp"
#include "report/json_get.hpp"
#include "report/report.hpp"

namespace harness {

std::string_view to_string(Verdict v) {
  switch (v) {
    case Verdict::faster: return "faster";
    case Verdict::slower: return "slower";
    case Verdict::same: return "same";
    case Verdict::new_: return "new";
    case Verdict::missing: return "missing";
    case Verdict::failed: return "failed";
    case Verdict::skipped: return "skipped";
    case Verdict::ambiguous: return "ambiguous";
    case Verdict::suspicious: return "suspicious";
  }
  return "?";
}

namespace {

using json_get::str_or;

std::string short_json(const nlohmann::json& j) {
  if (j.is_string()) return j.get<std::string>();
  if (j.is_null()) return "none";
  return j.dump();
}

std::string label_of(const Report& r) {
  const Environment& env = r.environment;
  if (!r.is_harness_report())
    return fmt::format("google-benchmark, {}, host {}", env.date.value_or("?"), env.host.value_or("?"));
  const std::string gpu = env.gpu && env.gpu->name ? *env.gpu->name : "no GPU";
  return fmt::format("suite {}, {}, {}, driver {}, commit {}", r.suite.name.value_or("?"), env.date.value_or("?"), gpu,
                     env.cuda_driver.value_or("?"), env.git_commit.value_or("?"));
}

// A result as compare pairs it: the key it is matched by and the name shown, both with
// "#2" appended to the second of two results with one key.
struct Entry {
  std::string key, name;
  const Result* result = nullptr;
};

// Only passed results were timed.
std::optional<double> median_of(const Result& r) {
  if (r.status != Status::passed || !r.timing) return std::nullopt;
  return r.timing->stats.median;
}

std::size_t samples_of(const Result& r) { return r.timing ? r.timing->samples.size() : 0; }

nlohmann::json params_json(const Params& p) {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& [n, v] : p.entries()) out[n] = std::visit([](const auto& x) { return nlohmann::json(x); }, v);
  return out;
}

// The parameters a result is paired by. A problem that gained a parameter after a report
// was written (gemm's dtype and layout, say) left that report's results without it: where
// this harness knows the problem, the missing ones are filled with today's defaults, so an
// old baseline still pairs with today's run at those defaults. `filled` collects the names.
nlohmann::json pairing_params(const Result& r, std::set<std::string>& filled) {
  nlohmann::json out = params_json(r.params);
  if (const Problem* problem = Registry::instance().find_problem(r.problem))
    for (const auto& spec : problem->params())
      if (!r.params.has(spec.name)) {
        out[spec.name] = std::visit([](const auto& x) { return nlohmann::json(x); }, spec.default_value);
        filled.insert(r.problem + ": " + spec.name + " = " + out[spec.name].dump());
      }
  return out;
}

// A hostile report: a timed result whose figures are not finite (or negative) is a located
// input error, not a verdict computed from NaN.
void check_finite(const Report& report, const Result& r) {
  if (!r.timing) return;
  auto bad = [&](const std::string& what, double v) {
    if (!std::isfinite(v) || v < 0)
      throw InputError(fmt::format("{}: result '{}': {} is {}: expected a finite, non-negative number", report.path, r.name,
                                   what, v));
  };
  const Stats& s = r.timing->stats;
  bad("stats.median_s", s.median);
  bad("stats.q1_s", s.q1);
  bad("stats.q3_s", s.q3);
  if (s.has_noise()) bad("stats.rel_noise", s.rel_noise);
  for (std::size_t i = 0; i < r.timing->samples.size(); ++i) bad(fmt::format("samples_s[{}]", i), r.timing->samples[i]);
  if (r.timing->clocks) bad("clocks.median_mhz", r.timing->clocks->median_mhz);  // absent clocks are fine (CPU, old reports)
}

std::vector<Entry> entries_of(const Report& report, std::vector<std::string>& warnings,
                              std::set<std::string>& filled) {
  if (!report.errors.empty()) throw InputError(fmt::format("{}: {}", report.path, report.errors.front()));
  for (const Result& r : report.results)
    if (r.status == Status::passed) check_finite(report, r);
  std::vector<Entry> out;
  std::map<std::string, int> seen;
  for (const Result& r : report.results) {
    Entry e;
    e.result = &r;
    e.name = r.name;
    // nlohmann's object keeps keys sorted: dump() is a canonical form of the parameters.
    e.key = !report.is_harness_report() || r.problem.empty()
                ? r.name
                : r.problem + "/" + r.variant + "/" + pairing_params(r, filled).dump();
    const int n = ++seen[e.key];
    if (n > 1) {
      warnings.push_back(fmt::format("{}: '{}' appears {} times; compared as '{}#{}'", report.path, e.name, n, e.name, n));
      e.key += fmt::format("#{}", n);
      e.name += fmt::format("#{}", n);
    }
    out.push_back(std::move(e));
  }
  return out;
}

// Said once per report whose results were paired through defaults the other report states
// explicitly (nothing when both lack the same parameters: they pair as they always did).
void filled_warning(const Report& report, const std::set<std::string>& filled, const std::set<std::string>& other,
                    std::vector<std::string>& warnings) {
  std::string list;
  for (const auto& f : filled)
    if (!other.count(f)) list += (list.empty() ? "" : "; ") + f;
  if (!list.empty())
    warnings.push_back(fmt::format("{}: parameters added since this report was written, paired at their defaults: {}",
                                   report.path, list));
}

void environment_warnings(const Report& base, const Report& cand, std::vector<std::string>& out) {
  using json_get::at;
  const auto& b = base.environment.raw;
  const auto& c = cand.environment.raw;
  auto differ = [&](std::initializer_list<const char*> keys, const std::string& what) {
    const auto* x = at(b, keys);
    const auto* y = at(c, keys);
    const nlohmann::json nx = x ? *x : nlohmann::json(), ny = y ? *y : nlohmann::json();
    if (nx != ny)
      out.push_back(fmt::format("{} differ: baseline {}, candidate {}", what, short_json(nx), short_json(ny)));
  };
  if (base.format != cand.format)
    out.push_back(fmt::format("comparing a {} file with a {} file: matched by benchmark name", base.format,
                              cand.format));
  if (base.is_harness_report() && cand.is_harness_report()) {
    const auto& bg = base.environment.gpu;
    const auto& cg = cand.environment.gpu;
    const bool bgpu = bg.has_value(), cgpu = cg.has_value();
    if (bgpu != cgpu)
      out.push_back(fmt::format("one report has a GPU and the other none: baseline {}, candidate {}",
                                bgpu ? bg->name.value_or("?") : "no GPU", cgpu ? cg->name.value_or("?") : "no GPU"));
    if (bgpu && cgpu) {
      differ({"gpu", "name"}, "GPUs");
      differ({"gpu", "sm_clock_max_mhz"}, "clock states (maximum SM clock, MHz)");
      differ({"gpu", "memory_clock_mhz"}, "clock states (memory clock, MHz)");
      differ({"clocks"}, "clock states");
    }
    differ({"cuda_driver"}, "CUDA drivers");
    differ({"cuda_runtime"}, "CUDA runtimes");
    differ({"cpu"}, "CPUs (cpu variants are timed on the host)");
    const auto& bs = base.suite.settings;
    const auto& cs = cand.suite.settings;
    if (bs && cs && bs->cache != cs->cache)
      out.push_back(fmt::format("measurement settings differ: cache mode {} (baseline) vs {} (candidate)",
                                to_string(bs->cache), to_string(cs->cache)));
  } else if (!base.is_harness_report() && !cand.is_harness_report()) {
    differ({"host_name"}, "hosts");
    differ({"num_cpus"}, "CPU counts");
    differ({"mhz_per_cpu"}, "CPU clocks (MHz)");
  }
  for (const Report* s : {&base, &cand}) {
    if (s->is_harness_report()) continue;
    if (str_or(s->environment.raw, {"library_build_type"}) == "debug")
      out.push_back(fmt::format("{}: Google Benchmark library was built in debug mode", s->path));
    if (json_get::boolean(s->environment.raw, {"cpu_scaling_enabled"}).value_or(false))
      out.push_back(fmt::format("{}: CPU frequency scaling was enabled", s->path));
  }
}

// Anything but passed and skipped is a failure: failed (check), error, crashed, timeout.
bool check_failed(const Result& r) { return r.status == Status::failed || (r.check && !r.check->passed); }
bool is_failed(const Result& r) {
  return (r.status != Status::passed && r.status != Status::skipped) || check_failed(r);
}


// The verdicts that need no timing comparison: missing, failed, new, skipped. False when
// both sides have a median to compare.
bool judge_unpaired(Pair& p, const Result* b, const Result* c, std::optional<double> b_median,
                    std::optional<double> c_median, const CompareOptions& o) {
  if (!c) {
    p.verdict = Verdict::missing;
    p.note = "not in the candidate";
    p.regression = o.fail_on_missing;
    return true;
  }
  if (is_failed(*c)) {
    p.verdict = Verdict::failed;
    p.regression = true;
    const std::string status(to_string(c->status));
    std::string why = c->reason.empty() ? (check_failed(*c) ? "check failed" : status) : c->reason;
    p.note = fmt::format("{} in the candidate: {}", status, why);
    if (b && is_failed(*b)) p.note += " (failed in the baseline too)";
    return true;
  }
  if (!b) {
    p.verdict = Verdict::new_;
    p.note = "not in the baseline";
    return true;
  }
  if (!c_median) {
    if (b_median) {
      p.verdict = Verdict::missing;
      p.regression = o.fail_on_missing;
      p.note = fmt::format("{} in the candidate: {}", to_string(c->status), c->reason);
    } else {
      p.verdict = Verdict::skipped;
      p.note = c->reason;
    }
    return true;
  }
  if (!b_median) {
    p.verdict = Verdict::new_;
    p.note = fmt::format("{} in the baseline: {}", to_string(b->status), b->reason);
    return true;
  }
  return false;
}

// Why the runs cannot decide a change of their medians (empty: they can). See compare.hpp.
std::vector<std::string> ambiguity(const Result& b, const Result& c, double bm, double cm, const CompareOptions& o) {
  std::vector<std::string> why;
  const Stats& bs = b.timing->stats;
  const Stats& cs = c.timing->stats;
  // Each run's interquartile range around its median (spread_k scales it); the runs cannot
  // decide when the two ranges overlap.
  const double b_lo = bm - o.spread_k * (bm - bs.q1), b_hi = bm + o.spread_k * (bs.q3 - bm);
  const double c_lo = cm - o.spread_k * (cm - cs.q1), c_hi = cm + o.spread_k * (cs.q3 - cm);
  if (bs.q3 > bs.q1 && cs.q3 > cs.q1 && std::max(b_lo, c_lo) <= std::min(b_hi, c_hi))
    why.push_back(fmt::format("the runs' interquartile ranges overlap ({} .. {} and {} .. {})", format_seconds_short(b_lo),
                              format_seconds_short(b_hi), format_seconds_short(c_lo), format_seconds_short(c_hi)));
  const auto& bc = b.timing->clocks;
  const auto& cc = c.timing->clocks;
  if (bc && cc && bc->median_mhz > 0 && cc->median_mhz > 0) {
    const double d = cc->median_mhz / bc->median_mhz - 1;
    if (std::fabs(d) > o.max_clock_change)
      why.push_back(fmt::format("the SM clocks differ: median {:.0f} MHz (baseline) vs {:.0f} MHz (candidate), {} > {:g}%",
                                bc->median_mhz, cc->median_mhz, format_change(d), o.max_clock_change * 100));
  }
  if (b.throttled != c.throttled)
    why.push_back(fmt::format("throttled in the {} only", b.throttled ? "baseline" : "candidate"));
  return why;
}

// Two medians: the change, the U test on the samples where it can decide, the verdict.
void judge_times(Pair& p, const Result& b, const Result& c, double bm, double cm, const CompareOptions& o) {
  static const std::vector<double> kNone;
  const std::vector<double>& bs = b.timing ? b.timing->samples : kNone;
  const std::vector<double>& cs = c.timing ? c.timing->samples : kNone;
  if (!(bm > 0) || !(cm > 0)) {
    p.verdict = Verdict::same;
    p.note = "a median time is zero: not compared";
    return;
  }
  p.change = cm / bm - 1;
  bool use_test = true;
  if (bs.empty() || cs.empty()) {
    use_test = false;
    p.note = "no samples (aggregates only): decided by the threshold alone";
  } else if (mann_whitney_min_p(bs.size(), cs.size()) >= o.alpha) {
    use_test = false;
    p.note = fmt::format("too few samples ({} and {}) for the U test at alpha {}: decided by the threshold alone",
                         bs.size(), cs.size(), o.alpha);
  }
  bool significant = true, separated = true;
  if (use_test) {
    const MannWhitney m = mann_whitney_u(cs, bs);
    p.p_value = m.p_value;
    p.exact_test = m.exact;
    p.effect_size = 2 * m.prob_greater - 1;
    significant = m.p_value < o.alpha;
    separated = std::fabs(*p.effect_size) >= o.min_effect_size && *p.effect_size * *p.change > 0;
  }
  const bool large = std::fabs(*p.change) >= o.threshold * (1 - 1e-9);
  if (large && significant && separated) {
    const Verdict would = *p.change > 0 ? Verdict::slower : Verdict::faster;
    if (b.timing && c.timing)
      if (const auto why = ambiguity(b, c, bm, cm, o); !why.empty()) {
        p.verdict = Verdict::ambiguous;
        p.regression = o.fail_on_ambiguous;
        p.note = fmt::format("would be {}, but {}", to_string(would), fmt::join(why, "; "));
        return;
      }
    p.verdict = would;
    p.regression = p.verdict == Verdict::slower;
    return;
  }
  p.verdict = Verdict::same;
  if (!large || !p.note.empty()) return;
  if (!significant)
    p.note = fmt::format("change not significant (p = {})", format_p_value(*p.p_value));
  else if (*p.effect_size * *p.change <= 0)
    p.note = fmt::format("the median moved {} but the ranks the other way (effect size {:+.2f})",
                         *p.change > 0 ? "up" : "down", *p.effect_size);
  else
    p.note = fmt::format("samples overlap: effect size {:+.2f} is below {:g}", *p.effect_size, o.min_effect_size);
}

// A time that cannot be trusted (issue 33's marks) decides nothing in the direction it
// favours: a marked candidate is never faster (nor same), and an honest candidate is never
// slower than a marked baseline. Such a pair is `suspicious`, with what it would have been.
void distrust_marked(Pair& p, const Result& b, const Result& c) {
  auto mark = [](const Result& r) { return r.integrity.suspicious ? r.integrity.suspicious : r.integrity.outside; };
  auto what = [](const Result& r) {
    return r.integrity.suspicious ? "suspicious" : "marked 'work outside the timed region'";
  };
  const Result* marked = nullptr;
  if (mark(c) && p.verdict != Verdict::slower) marked = &c;
  else if (!mark(c) && mark(b) && p.verdict != Verdict::faster) marked = &b;
  if (!marked) return;
  p.note = fmt::format("would be {}, but the {} is {}: {}", to_string(p.verdict), marked == &c ? "candidate" : "baseline",
                       what(*marked), *mark(*marked));
  p.verdict = Verdict::suspicious;
  p.regression = false;
}

Pair judge(const Entry* be, const Entry* ce, const CompareOptions& o) {
  const Entry& any = ce ? *ce : *be;
  const Result* b = be ? be->result : nullptr;
  const Result* c = ce ? ce->result : nullptr;
  Pair p;
  p.key = any.key;
  p.name = (be ? *be : *ce).name;
  p.problem = any.result->problem;
  p.variant = any.result->variant;
  p.params = params_json(any.result->params);
  std::optional<double> b_median, c_median;
  if (b) {
    p.base_median = b_median = median_of(*b);
    p.base_n = samples_of(*b);
  }
  if (c) {
    p.cand_median = c_median = median_of(*c);
    p.cand_n = samples_of(*c);
  }
  if (!judge_unpaired(p, b, c, b_median, c_median, o)) {
    judge_times(p, *b, *c, *b_median, *c_median, o);
    distrust_marked(p, *b, *c);
  }
  return p;
}

void count(ProblemSummary& s, const Pair& p) {
  switch (p.verdict) {
    case Verdict::faster: ++s.faster; break;
    case Verdict::slower: ++s.slower; break;
    case Verdict::same: ++s.same; break;
    case Verdict::new_: ++s.new_; break;
    case Verdict::missing: ++s.missing; break;
    case Verdict::failed: ++s.failed; break;
    case Verdict::skipped: ++s.skipped; break;
    case Verdict::ambiguous: ++s.ambiguous; break;
    case Verdict::suspicious: ++s.suspicious; break;
  }
}

// "gemm/tiled/M:256/N:256/K:256/alpha:1/beta:0" -> ("gemm/tiled", {M:256, ...}); names
// without "key:value" segments stay whole.
std::pair<std::string, std::vector<std::pair<std::string, std::string>>> split_name(const std::string& name) {
  std::vector<std::string> parts;
  std::size_t pos = 0;
  while (true) {
    const std::size_t end = name.find('/', pos);
    parts.push_back(name.substr(pos, end == std::string::npos ? std::string::npos : end - pos));
    if (end == std::string::npos) break;
    pos = end + 1;
  }
  std::string head;
  std::vector<std::pair<std::string, std::string>> kv;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    const std::size_t colon = parts[i].find(':');
    if (i >= 2 && colon != std::string::npos && colon > 0) {
      kv.emplace_back(parts[i].substr(0, colon), parts[i].substr(colon + 1));
    } else if (!kv.empty()) {
      return {name, {}};  // not the harness's naming: leave it alone
    } else {
      head += (head.empty() ? "" : "/") + parts[i];
    }
  }
  return {head, kv};
}

// Short names: parameters that are the same in every pair of a problem go to the
// problem's summary line instead.
void shorten_names(Comparison& c) {
  std::map<std::string, std::map<std::string, std::set<std::string>>> values;  // problem -> key -> values
  std::map<std::string, std::map<std::string, std::size_t>> present;
  std::map<std::string, std::size_t> pairs_of;
  std::map<std::string, std::vector<std::string>> key_order;
  for (const auto& p : c.pairs) {
    ++pairs_of[p.problem];
    for (const auto& [k, v] : split_name(p.name).second) {
      values[p.problem][k].insert(v);
      ++present[p.problem][k];
      auto& order = key_order[p.problem];
      if (std::find(order.begin(), order.end(), k) == order.end()) order.push_back(k);
    }
  }
  auto fixed = [&](const std::string& problem, const std::string& k) {
    return pairs_of[problem] > 1 && values[problem][k].size() == 1 && present[problem][k] == pairs_of[problem];
  };
  for (auto& p : c.pairs) {
    const auto [head, kv] = split_name(p.name);
    p.display = head;
    for (const auto& [k, v] : kv)
      if (!fixed(p.problem, k)) p.display += fmt::format(" {}={}", k, v);
  }
  for (auto& s : c.problems) {
    std::vector<std::string> parts;
    for (const auto& k : key_order[s.problem == "(none)" ? "" : s.problem])
      if (fixed(s.problem, k)) parts.push_back(fmt::format("{}={}", k, *values[s.problem][k].begin()));
    s.fixed_params = fmt::format("{}", fmt::join(parts, " "));
  }
}

void summarize(Comparison& c) {
  std::map<std::string, std::pair<double, std::size_t>> logs;  // problem -> (sum log ratio, n)
  std::vector<std::string> order;
  std::map<std::string, ProblemSummary> by_problem;
  double total_log = 0;
  c.total.problem = "all";
  for (const auto& p : c.pairs) {
    const std::string prob = p.problem.empty() ? "(none)" : p.problem;
    if (!by_problem.count(prob)) {
      order.push_back(prob);
      by_problem[prob].problem = prob;
    }
    ProblemSummary& s = by_problem[prob];
    count(s, p);
    count(c.total, p);
    if (p.change && (p.verdict == Verdict::same || p.verdict == Verdict::faster || p.verdict == Verdict::slower ||
                     p.verdict == Verdict::ambiguous)) {
      const double l = std::log1p(*p.change);
      logs[prob].first += l;
      ++logs[prob].second;
      total_log += l;
      ++c.total.compared;
    }
  }
  for (const auto& prob : order) {
    ProblemSummary s = by_problem[prob];
    s.compared = logs[prob].second;
    s.geomean_ratio = s.compared ? std::exp(logs[prob].first / static_cast<double>(s.compared)) : 1;
    c.problems.push_back(s);
  }
  c.total.geomean_ratio = c.total.compared ? std::exp(total_log / static_cast<double>(c.total.compared)) : 1;
}

}  // namespace

Comparison compare(const Report& base, const Report& cand, const CompareOptions& options) {
  Comparison c;
  c.options = options;
  c.base_path = base.path;
  c.cand_path = cand.path;
  c.base_label = label_of(base);
  c.cand_label = label_of(cand);
  std::vector<std::string> base_dups, cand_dups;
  std::set<std::string> base_filled, cand_filled;
  const std::vector<Entry> base_entries = entries_of(base, base_dups, base_filled);
  const std::vector<Entry> cand_entries = entries_of(cand, cand_dups, cand_filled);
  // As they were read: each report's duplicates, then its throttling.
  c.warnings = base_dups;
  c.warnings.insert(c.warnings.end(), base.warnings.begin(), base.warnings.end());
  c.warnings.insert(c.warnings.end(), cand_dups.begin(), cand_dups.end());
  c.warnings.insert(c.warnings.end(), cand.warnings.begin(), cand.warnings.end());
  filled_warning(base, base_filled, cand_filled, c.warnings);
  filled_warning(cand, cand_filled, base_filled, c.warnings);
  environment_warnings(base, cand, c.warnings);

  // Mixed formats: only the names are common to both.
  const bool by_name = base.format != cand.format;
  auto key = [&](const Entry& e) { return by_name ? e.name : e.key; };
  auto wanted = [&](const Entry& e) { return !options.filter || std::regex_search(e.name, *options.filter); };
  std::map<std::string, const Entry*> cand_by_key;
  for (const auto& e : cand_entries)
    if (wanted(e)) cand_by_key.emplace(key(e), &e);
  std::set<std::string> matched;
  for (const auto& b : base_entries) {
    if (!wanted(b)) continue;
    auto it = cand_by_key.find(key(b));
    const Entry* ce = it == cand_by_key.end() ? nullptr : it->second;
    if (ce) matched.insert(key(b));
    c.pairs.push_back(judge(&b, ce, options));
  }
  for (const auto& e : cand_entries)
    if (wanted(e) && !matched.count(key(e))) c.pairs.push_back(judge(nullptr, &e, options));
  for (const auto& p : c.pairs) c.regression = c.regression || p.regression;
  summarize(c);
  shorten_names(c);
  return c;
}

}  // namespace harness
