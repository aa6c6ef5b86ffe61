#pragma once
// Typed problem parameters: their declarations (ParamSpec) and one set of values (Params).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace harness {

enum class ParamType { integer, real, boolean, string, enumeration };
std::string_view to_string(ParamType type);

// int64 for integer, double for real, bool, string for string and enumeration.
using ParamValue = std::variant<std::int64_t, double, bool, std::string>;
std::string to_string(const ParamValue& value);

struct ParamSpec {
  std::string name;
  ParamType type = ParamType::integer;
  ParamValue default_value;
  std::optional<double> min;              // integer and real: inclusive bounds
  std::optional<double> max;
  std::vector<std::string> choices;       // enumeration
  std::string help;

  // Why `value` is not acceptable for this parameter, or nothing when it is.
  std::optional<std::string> reject(const ParamValue& value) const;
  // "integer in [1, 65536]", "one of {copy, scale, add, triad}", ...
  std::string describe_domain() const;
};

ParamSpec int_param(std::string name, std::int64_t def, std::optional<std::int64_t> min,
                    std::optional<std::int64_t> max, std::string help);
ParamSpec float_param(std::string name, double def, std::optional<double> min,
                      std::optional<double> max, std::string help);
ParamSpec bool_param(std::string name, bool def, std::string help);
ParamSpec string_param(std::string name, std::string def, std::string help);
ParamSpec enum_param(std::string name, std::string def, std::vector<std::string> choices,
                     std::string help);

// One complete assignment of values, in the problem's declaration order.
class Params {
 public:
  Params() = default;
  void set(const std::string& name, ParamValue value);
  bool has(std::string_view name) const;
  const ParamValue& at(std::string_view name) const;  // throws std::out_of_range

  std::int64_t get_int(std::string_view name) const;
  double get_float(std::string_view name) const;  // integers are widened
  bool get_bool(std::string_view name) const;
  const std::string& get_string(std::string_view name) const;

  const std::vector<std::pair<std::string, ParamValue>>& entries() const { return values_; }
  // "M=4096 N=4096 K=4096"
  std::string describe(char separator = ' ') const;

  friend bool operator==(const Params&, const Params&) = default;

 private:
  std::vector<std::pair<std::string, ParamValue>> values_;
};

// The problem's defaults, overridden by `values` (validated by the caller).
Params with_defaults(const std::vector<ParamSpec>& specs, const Params& values);

}  // namespace harness
