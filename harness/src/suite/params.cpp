#include "harness/params.hpp"

#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

namespace harness {

std::string_view to_string(ParamType type) {
  switch (type) {
    case ParamType::integer: return "int";
    case ParamType::real: return "float";
    case ParamType::boolean: return "bool";
    case ParamType::string: return "string";
    case ParamType::enumeration: return "enum";
  }
  return "?";
}

std::string to_string(const ParamValue& value) {
  return std::visit(
      [](const auto& v) -> std::string {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, bool>) return v ? "true" : "false";
        else if constexpr (std::is_same_v<T, double>) return fmt::format("{:g}", v);
        else if constexpr (std::is_same_v<T, std::string>) return v;
        else return fmt::format("{}", v);
      },
      value);
}

namespace {
std::string fmt_bound(double v, ParamType type) {
  return type == ParamType::integer ? fmt::format("{}", static_cast<long long>(v)) : fmt::format("{:g}", v);
}
}  // namespace

std::string ParamSpec::describe_domain() const {
  switch (type) {
    case ParamType::boolean: return "true or false";
    case ParamType::string: return "any string";
    case ParamType::enumeration: return fmt::format("one of {{{}}}", fmt::join(choices, ", "));
    case ParamType::integer:
    case ParamType::real: {
      const char* kind = type == ParamType::integer ? "integer" : "number";
      if (min && max) return fmt::format("{} in [{}, {}]", kind, fmt_bound(*min, type), fmt_bound(*max, type));
      if (min) return fmt::format("{} >= {}", kind, fmt_bound(*min, type));
      if (max) return fmt::format("{} <= {}", kind, fmt_bound(*max, type));
      return kind;
    }
  }
  return {};
}

std::optional<std::string> ParamSpec::reject(const ParamValue& value) const {
  auto out_of_range = [&](double v) -> std::optional<std::string> {
    if ((min && v < *min) || (max && v > *max) || std::isnan(v))
      return fmt::format("value {} of '{}' is out of range: expected {}", to_string(value), name,
                         describe_domain());
    return std::nullopt;
  };
  switch (type) {
    case ParamType::integer:
      if (!std::holds_alternative<std::int64_t>(value))
        return fmt::format("'{}' expects an integer, got '{}'", name, to_string(value));
      return out_of_range(static_cast<double>(std::get<std::int64_t>(value)));
    case ParamType::real:
      if (std::holds_alternative<std::int64_t>(value))
        return out_of_range(static_cast<double>(std::get<std::int64_t>(value)));
      if (!std::holds_alternative<double>(value))
        return fmt::format("'{}' expects a number, got '{}'", name, to_string(value));
      if (!std::isfinite(std::get<double>(value)))
        return fmt::format("'{}' expects a finite number, got '{}'", name, to_string(value));
      return out_of_range(std::get<double>(value));
    case ParamType::boolean:
      if (!std::holds_alternative<bool>(value))
        return fmt::format("'{}' expects true or false, got '{}'", name, to_string(value));
      return std::nullopt;
    case ParamType::string:
      if (!std::holds_alternative<std::string>(value))
        return fmt::format("'{}' expects a string, got '{}'", name, to_string(value));
      return std::nullopt;
    case ParamType::enumeration: {
      const std::string text = to_string(value);
      for (const auto& c : choices)
        if (c == text) return std::nullopt;
      return fmt::format("'{}' must be one of {{{}}}, got '{}'", name, fmt::join(choices, ", "), text);
    }
  }
  return std::nullopt;
}

ParamSpec int_param(std::string name, std::int64_t def, std::optional<std::int64_t> min,
                    std::optional<std::int64_t> max, std::string help) {
  ParamSpec s{std::move(name), ParamType::integer, def, {}, {}, {}, std::move(help)};
  if (min) s.min = static_cast<double>(*min);
  if (max) s.max = static_cast<double>(*max);
  return s;
}
ParamSpec float_param(std::string name, double def, std::optional<double> min,
                      std::optional<double> max, std::string help) {
  return {std::move(name), ParamType::real, def, min, max, {}, std::move(help)};
}
ParamSpec bool_param(std::string name, bool def, std::string help) {
  return {std::move(name), ParamType::boolean, def, {}, {}, {}, std::move(help)};
}
ParamSpec string_param(std::string name, std::string def, std::string help) {
  return {std::move(name), ParamType::string, std::move(def), {}, {}, {}, std::move(help)};
}
ParamSpec enum_param(std::string name, std::string def, std::vector<std::string> choices,
                     std::string help) {
  return {std::move(name), ParamType::enumeration, std::move(def), {}, {}, std::move(choices), std::move(help)};
}

void Params::set(const std::string& name, ParamValue value) {
  for (auto& [n, v] : values_) {
    if (n == name) {
      v = std::move(value);
      return;
    }
  }
  values_.emplace_back(name, std::move(value));
}

bool Params::has(std::string_view name) const {
  for (const auto& [n, v] : values_)
    if (n == name) return true;
  return false;
}

const ParamValue& Params::at(std::string_view name) const {
  for (const auto& [n, v] : values_)
    if (n == name) return v;
  throw std::out_of_range(fmt::format("no parameter '{}'", name));
}

std::int64_t Params::get_int(std::string_view name) const { return std::get<std::int64_t>(at(name)); }
double Params::get_float(std::string_view name) const {
  const ParamValue& v = at(name);
  if (const auto* i = std::get_if<std::int64_t>(&v)) return static_cast<double>(*i);
  return std::get<double>(v);
}
bool Params::get_bool(std::string_view name) const { return std::get<bool>(at(name)); }
const std::string& Params::get_string(std::string_view name) const { return std::get<std::string>(at(name)); }

std::string Params::describe(char separator) const {
  std::string out;
  for (const auto& [n, v] : values_) {
    if (!out.empty()) out += separator;
    out += n;
    out += '=';
    out += to_string(v);
  }
  return out;
}

Params with_defaults(const std::vector<ParamSpec>& specs, const Params& values) {
  Params out;
  for (const auto& spec : specs) {
    if (values.has(spec.name)) {
      ParamValue v = values.at(spec.name);
      // An integer literal given for a float parameter is stored as a float.
      if (spec.type == ParamType::real)
        if (const auto* i = std::get_if<std::int64_t>(&v)) v = static_cast<double>(*i);
      out.set(spec.name, std::move(v));
    } else {
      out.set(spec.name, spec.default_value);
    }
  }
  return out;
}

}  // namespace harness
