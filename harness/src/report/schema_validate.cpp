#include "report/schema_validate.hpp"

#include <cmath>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "harness/error.hpp"
#include "report/report.hpp"
#include "report/report_model.hpp"

namespace harness {

namespace {

using nlohmann::json;

const std::set<std::string>& supported_keywords() {
  static const std::set<std::string> k = {"type",  "required", "properties", "additionalProperties", "items",
                                          "enum",  "const",    "minimum",    "maximum",              "minItems",
                                          "$ref",  "$defs"};
  return k;
}

bool is_annotation(const std::string& key) {
  static const std::set<std::string> a = {"$schema", "$id", "$comment", "title", "description", "default", "examples"};
  return a.count(key) || key.rfind("x-", 0) == 0;
}

std::string type_of(const json& v) {
  switch (v.type()) {
    case json::value_t::object: return "object";
    case json::value_t::array: return "array";
    case json::value_t::string: return "string";
    case json::value_t::boolean: return "boolean";
    case json::value_t::null: return "null";
    case json::value_t::number_integer:
    case json::value_t::number_unsigned: return "integer";
    case json::value_t::number_float: {
      const double d = v.get<double>();
      return std::isfinite(d) && d == std::floor(d) ? "integer" : "number";
    }
    default: return "unknown";
  }
}

bool has_type(const json& v, const std::string& t) {
  const std::string actual = type_of(v);
  return actual == t || (t == "number" && actual == "integer");
}

std::string short_value(const json& v) {
  std::string s = v.dump();
  if (s.size() > 40) s = s.substr(0, 37) + "...";
  return s;
}

std::string child(const std::string& path, const std::string& key) { return path.empty() ? key : path + "." + key; }

void check_schema(const json& s, const json& root, const std::string& where) {
  if (s.is_boolean()) return;
  if (!s.is_object()) throw InputError(fmt::format("schema {}: a schema is an object or a boolean", where));
  for (const auto& [key, value] : s.items()) {
    if (is_annotation(key)) continue;
    if (!supported_keywords().count(key))
      throw InputError(fmt::format("schema {}: keyword '{}' is not implemented by harness validate", where, key));
    if (key == "properties" || key == "$defs") {
      if (!value.is_object()) throw InputError(fmt::format("schema {}.{}: expected an object", where, key));
      for (const auto& [name, sub] : value.items()) check_schema(sub, root, where + "." + key + "." + name);
    } else if (key == "additionalProperties" || key == "items") {
      check_schema(value, root, where + "." + key);
    } else if (key == "$ref") {
      const std::string ref = value.is_string() ? value.get<std::string>() : "";
      if (ref.rfind("#/", 0) != 0)
        throw InputError(fmt::format("schema {}: only local references (#/...) are implemented", where));
      if (!root.contains(json::json_pointer(ref.substr(1))))
        throw InputError(fmt::format("schema {}: reference '{}' does not resolve", where, ref));
    } else if (key == "type") {
      std::vector<json> types = value.is_array() ? value.get<std::vector<json>>() : std::vector<json>{value};
      static const std::set<std::string> known = {"object", "array", "string", "number", "integer", "boolean", "null"};
      for (const auto& t : types)
        if (!t.is_string() || !known.count(t.get<std::string>()))
          throw InputError(fmt::format("schema {}: unknown type {}", where, t.dump()));
    } else if (key == "required" || key == "enum") {
      if (!value.is_array()) throw InputError(fmt::format("schema {}.{}: expected an array", where, key));
    } else if (key == "minimum" || key == "maximum" || key == "minItems") {
      if (!value.is_number()) throw InputError(fmt::format("schema {}.{}: expected a number", where, key));
    }
  }
}

struct Walker {
  const json& root;
  std::size_t max_issues;
  std::vector<SchemaIssue>& issues;
  int depth = 0;

  bool full() const { return issues.size() >= max_issues; }
  void issue(const std::string& path, std::string msg) {
    if (!full()) issues.push_back({path, std::move(msg)});
  }

  void walk(const json& v, const json& s, const std::string& path) {
    if (full()) return;
    if (s.is_boolean()) {
      if (!s.get<bool>()) issue(path, "not allowed here");
      return;
    }
    if (++depth > 200) {
      --depth;
      issue(path, "schema references nest too deeply");
      return;
    }
    if (auto it = s.find("$ref"); it != s.end()) walk(v, root.at(json::json_pointer(it->get<std::string>().substr(1))), path);
    if (auto it = s.find("type"); it != s.end()) {
      std::vector<std::string> types;
      if (it->is_array())
        for (const auto& t : *it) types.push_back(t.get<std::string>());
      else
        types.push_back(it->get<std::string>());
      bool match = false;
      for (const auto& t : types) match = match || has_type(v, t);
      if (!match) {
        issue(path, fmt::format("expected {}, got {}", fmt::join(types, " or "), type_of(v)));
        --depth;
        return;
      }
    }
    if (auto it = s.find("const"); it != s.end() && v != *it)
      issue(path, fmt::format("expected {}, got {}", it->dump(), short_value(v)));
    if (auto it = s.find("enum"); it != s.end()) {
      bool found = false;
      std::vector<std::string> options;
      for (const auto& e : *it) {
        found = found || v == e;
        options.push_back(e.is_string() ? e.get<std::string>() : e.dump());
      }
      if (!found) issue(path, fmt::format("{} is not one of {}", short_value(v), fmt::join(options, ", ")));
    }
    if (v.is_number()) {
      const double d = v.get<double>();
      if (auto it = s.find("minimum"); it != s.end() && d < it->get<double>())
        issue(path, fmt::format("{} is below the minimum {}", short_value(v), it->dump()));
      if (auto it = s.find("maximum"); it != s.end() && d > it->get<double>())
        issue(path, fmt::format("{} is above the maximum {}", short_value(v), it->dump()));
    }
    if (v.is_array()) {
      if (auto it = s.find("minItems"); it != s.end() && static_cast<double>(v.size()) < it->get<double>())
        issue(path, fmt::format("expected at least {} items, got {}", it->dump(), v.size()));
      if (auto it = s.find("items"); it != s.end())
        for (std::size_t i = 0; i < v.size() && !full(); ++i) walk(v[i], *it, fmt::format("{}[{}]", path, i));
    }
    if (v.is_object()) {
      if (auto it = s.find("required"); it != s.end())
        for (const auto& key : *it)
          if (!v.contains(key.get<std::string>()))
            issue(path, fmt::format("missing required key '{}'", key.get<std::string>()));
      const json* props = s.contains("properties") ? &s["properties"] : nullptr;
      const json* extra = s.contains("additionalProperties") ? &s["additionalProperties"] : nullptr;
      for (const auto& [key, value] : v.items()) {
        if (full()) break;
        if (props && props->contains(key)) walk(value, (*props)[key], child(path, key));
        else if (extra) walk(value, *extra, child(path, key));
      }
    }
    --depth;
  }
};

}  // namespace

SchemaValidator::SchemaValidator(json schema) : schema_(std::move(schema)) { check_schema(schema_, schema_, "#"); }

std::vector<SchemaIssue> SchemaValidator::validate(const json& doc, std::size_t max_issues) const {
  std::vector<SchemaIssue> issues;
  Walker w{schema_, max_issues, issues};
  w.walk(doc, schema_, "");
  return issues;
}

const json& embedded_report_schema() {
  static const json schema = json::parse(
#include "report_schema.inc"
  );
  return schema;
}

std::string format_issue(const SchemaIssue& issue) {
  return issue.path.empty() ? issue.message : issue.path + ": " + issue.message;
}

ReportValidation validate_report_file(const std::string& path, const std::string& schema_path) {
  json schema;
  if (schema_path.empty()) {
    schema = embedded_report_schema();
  } else {
    std::ifstream in(schema_path);
    if (!in) throw InputError(fmt::format("{}: cannot open the schema", schema_path));
    std::stringstream text;
    text << in.rdbuf();
    try {
      schema = json::parse(text.str());
    } catch (const json::parse_error& e) {
      throw InputError(fmt::format("{}: the schema is not valid JSON: byte {}", schema_path, e.byte));
    } catch (const json::exception& e) {  // out_of_range: a number beyond double
      throw InputError(fmt::format("{}: the schema is not valid JSON: {}", schema_path, e.what()));
    }
  }
  const SchemaValidator validator(schema);
  // read_report: unreadable, truncated (not JSON), not a report, or a newer version.
  const json report = read_report(path);
  if (report.value("schema", "") != kReportSchema)
    throw InputError(fmt::format("{}: Google Benchmark JSON, not a harness report", path));
  ReportValidation v;
  v.schema_version = report.value("schema_version", 0);
  if (const auto it = schema.find("x-harness-schema-version"); it != schema.end() && it->is_number_integer() &&
                                                               v.schema_version > it->get<int>())
    throw InputError(fmt::format("{}: report schema version {} is newer than the schema ({})", path,
                                 v.schema_version, it->get<int>()));
  v.results = report["results"].size();
  v.issues = validator.validate(report);
  if (!v.issues.empty()) return v;
  // What a schema cannot say: the summary counts the results, stats count the samples.
  const Report model = decode_report(report, path);
  std::map<std::string, long long> counts;
  for (const Result& r : model.results) ++counts[std::string(to_string(r.status))];
  for (const auto& [status, n] : report["summary"].items()) {
    const long long expected = counts.count(status) ? counts[status] : 0;
    if (n.get<long long>() != expected)
      v.issues.push_back({"summary." + status, fmt::format("says {}, but {} results have status '{}'",
                                                           n.get<long long>(), expected, status)});
  }
  for (std::size_t i = 0; i < model.results.size(); ++i) {
    const Result& r = model.results[i];
    if (r.timing && r.timing->stats.count != r.timing->samples.size())
      v.issues.push_back({fmt::format("results[{}].stats.count", i),
                          fmt::format("says {}, but samples_s holds {} samples", r.timing->stats.count,
                                      r.timing->samples.size())});
  }
  return v;
}

}  // namespace harness
