#include "report/merge_align.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <optional>
#include <set>
#include <variant>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace harness {

namespace {

std::string text_of(const ParamValue& v) {
  return std::visit(
      [](const auto& x) -> std::string {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, std::string>) return x;
        else if constexpr (std::is_same_v<T, bool>) return x ? "true" : "false";
        else return fmt::format("{}", x);
      },
      v);
}

bool number_of(const ParamValue& v, double& d) {
  if (const auto* i = std::get_if<std::int64_t>(&v)) return d = static_cast<double>(*i), true;
  if (const auto* f = std::get_if<double>(&v)) return d = *f, true;
  return false;
}

// Numbers by value: two writers' clip_norm 1.0 and 1 are one setting.
bool same_value(const ParamValue& a, const ParamValue& b) {
  double x = 0, y = 0;
  if (number_of(a, x) && number_of(b, y)) return x == y;
  return a == b;
}

// The k:v segments of a name "problem/variant/k:v/..." (both `harness run` and
// reports/pytorch_transformer.py write it so); empty when the name has another form.
std::map<std::string, std::string> name_pairs(const Result& r) {
  std::map<std::string, std::string> out;
  const std::string head = r.problem + "/" + r.variant + "/";
  if (r.name.rfind(head, 0) != 0) return out;
  for (std::size_t pos = head.size(); pos < r.name.size();) {
    const std::size_t end = std::min(r.name.find('/', pos), r.name.size());
    const std::string seg = r.name.substr(pos, end - pos);
    const std::size_t colon = seg.find(':');
    if (colon == std::string::npos || colon == 0) return {};
    out.emplace(seg.substr(0, colon), seg.substr(colon + 1));
    pos = end + 1;
  }
  return out;
}

// `text` read as the type of `model` (a string where it does not parse).
ParamValue like(const ParamValue& model, const std::string& text) {
  char* end = nullptr;
  if (std::holds_alternative<bool>(model) && (text == "true" || text == "false")) return text == "true";
  if (std::holds_alternative<std::int64_t>(model)) {
    const long long v = std::strtoll(text.c_str(), &end, 10);
    if (!text.empty() && end == text.c_str() + text.size()) return static_cast<std::int64_t>(v);
  }
  if (std::holds_alternative<double>(model)) {
    const double v = std::strtod(text.c_str(), &end);
    if (!text.empty() && end == text.c_str() + text.size()) return v;
  }
  return text;
}

std::string base_name(const std::string& path) {
  const std::size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string param_path(const Params& p) {
  std::string s;
  for (const auto& [n, v] : p.entries()) s += fmt::format("/{}:{}", n, text_of(v));
  return s;
}

struct Aligner {
  std::vector<Result>& results;
  const std::vector<std::size_t>& source;
  const std::vector<std::string>& paths;
  std::vector<bool> changed;  // per result: params or variant rewritten
  std::vector<std::string> notes;

  std::string files_of(const std::vector<std::size_t>& rows) const {
    std::vector<std::string> files;
    for (std::size_t i : rows) {
      const std::string f = source[i] < paths.size() ? base_name(paths[source[i]]) : "?";
      if (std::find(files.begin(), files.end(), f) == files.end()) files.push_back(f);
    }
    return fmt::format("{}", fmt::join(files, ", "));
  }

  void align_params(const std::vector<std::size_t>& rows) {
    std::vector<std::string> names;
    for (std::size_t i : rows)
      for (const auto& [n, v] : results[i].params.entries())
        if (std::find(names.begin(), names.end(), n) == names.end()) names.push_back(n);
    std::set<std::string> dropped;
    std::map<std::size_t, std::map<std::string, ParamValue>> filled;  // row -> from its name
    for (const auto& n : names) {
      std::vector<std::size_t> with;
      for (std::size_t i : rows)
        if (results[i].params.has(n)) with.push_back(i);
      if (with.size() == rows.size()) continue;
      const ParamValue& first = results[with.front()].params.at(n);
      bool constant = true;
      for (std::size_t i : with) constant = constant && same_value(results[i].params.at(n), first);
      if (constant) {
        dropped.insert(n);
        notes.push_back(fmt::format("{}={} (only in {})", n, text_of(first), files_of(with)));
        continue;
      }
      for (std::size_t i : rows)
        if (!results[i].params.has(n)) {
          const auto pairs = name_pairs(results[i]);
          if (const auto it = pairs.find(n); it != pairs.end()) filled[i].emplace(n, like(first, it->second));
        }
    }
    // A parameter written as an integer by one side and 1.0 by the other: integers.
    std::set<std::string> integral;
    for (const auto& n : names) {
      bool any_int = false, all_whole = true;
      for (std::size_t i : rows) {
        if (!results[i].params.has(n)) continue;
        const ParamValue& v = results[i].params.at(n);
        double d = 0;
        any_int = any_int || std::holds_alternative<std::int64_t>(v);
        all_whole = all_whole && number_of(v, d) && d == std::floor(d) && std::fabs(d) < 9e15;
      }
      if (any_int && all_whole) integral.insert(n);
    }
    for (std::size_t i : rows) {
      Params p;
      for (const auto& n : names) {
        if (dropped.count(n)) continue;
        std::optional<ParamValue> v;
        if (results[i].params.has(n)) v = results[i].params.at(n);
        else if (const auto f = filled[i].find(n); f != filled[i].end()) v = f->second;
        if (!v) continue;
        double d = 0;
        if (integral.count(n) && number_of(*v, d)) v = static_cast<std::int64_t>(d);
        p.set(n, *v);
      }
      if (!(p == results[i].params)) {
        results[i].params = std::move(p);
        changed[i] = true;
      }
    }
  }

  // Short string and boolean fields of extra (compile_mode, mode, gemm): what tells two
  // runs of one variant apart; long texts (phase_times' reason) are no label.
  static std::map<std::string, std::string> label_fields(const Result& r) {
    std::map<std::string, std::string> out;
    if (!r.extra.is_object()) return out;
    for (const auto& [k, v] : r.extra.items()) {
      if (v.is_boolean()) out[k] = v.get<bool>() ? "true" : "false";
      else if (v.is_null()) out[k] = "none";
      else if (v.is_string() && v.get<std::string>().size() <= 32 &&
               v.get<std::string>().find(' ') == std::string::npos)
        out[k] = v.get<std::string>();
    }
    return out;
  }

  void tell_apart(const std::vector<std::size_t>& rows) {
    std::map<std::string, std::size_t> per_shape;
    bool twice = false;
    for (std::size_t i : rows) twice = ++per_shape[param_path(results[i].params)] > 1 || twice;
    if (!twice) return;
    std::vector<std::map<std::string, std::string>> fields;
    std::set<std::string> keys;
    for (std::size_t i : rows) {
      fields.push_back(label_fields(results[i]));
      for (const auto& [k, v] : fields.back()) keys.insert(k);
    }
    std::vector<std::string> differ;
    for (const auto& k : keys) {
      std::set<std::string> values;
      for (const auto& f : fields) values.insert(f.count(k) ? f.at(k) : "none");
      if (values.size() > 1) differ.push_back(k);
    }
    if (std::find(differ.begin(), differ.end(), "compile_mode") != differ.end()) differ = {"compile_mode"};
    std::set<std::string> files;
    for (std::size_t i : rows) files.insert(source[i] < paths.size() ? base_name(paths[source[i]]) : "");
    per_shape.clear();
    for (std::size_t k = 0; k < rows.size(); ++k) {
      Result& r = results[rows[k]];
      std::string label = r.variant;
      if (!differ.empty()) {
        for (const auto& d : differ) label += fmt::format(" {}={}", d, fields[k].count(d) ? fields[k].at(d) : "none");
      } else if (files.size() > 1) {
        label += fmt::format(" ({})", base_name(paths[source[rows[k]]]));
      } else if (const std::size_t n = ++per_shape[param_path(r.params)]; n > 1) {
        label += fmt::format(" ({})", n);
      }
      if (label != r.variant) {
        r.variant = label;
        changed[rows[k]] = true;
      }
    }
  }
};

}  // namespace

std::vector<std::string> align_merged_results(std::vector<Result>& results, const std::vector<std::size_t>& source,
                                              const std::vector<std::string>& paths) {
  Aligner a{results, source, paths, std::vector<bool>(results.size(), false), {}};
  std::vector<std::string> problems;
  for (const Result& r : results)
    if (std::find(problems.begin(), problems.end(), r.problem) == problems.end()) problems.push_back(r.problem);
  for (const auto& problem : problems) {
    std::vector<std::size_t> rows;
    for (std::size_t i = 0; i < results.size(); ++i)
      if (results[i].problem == problem) rows.push_back(i);
    a.align_params(rows);
    std::map<std::string, std::vector<std::size_t>> by_variant;
    std::vector<std::string> order;
    for (std::size_t i : rows) {
      auto [it, fresh] = by_variant.try_emplace(results[i].variant);
      if (fresh) order.push_back(results[i].variant);
      it->second.push_back(i);
    }
    for (const auto& v : order) a.tell_apart(by_variant[v]);
  }
  // The curves read a result's configuration from its name: rebuilt from what changed.
  for (std::size_t i = 0; i < results.size(); ++i)
    if (a.changed[i]) results[i].name = results[i].problem + "/" + results[i].variant + param_path(results[i].params);
  return a.notes;
}

}  // namespace harness
