#pragma once
// A suite: YAML in, a validated list of expanded cases out. Every input error surfaces
// here, before any GPU work, as an InputError "file:line:column: message".
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "harness/params.hpp"
#include "harness/problem.hpp"
#include "harness/registry.hpp"
#include "harness/variant.hpp"
#include "types/settings.hpp"

namespace harness {

struct Case {
  std::string name;               // the suite's case name ("square")
  std::string location;           // "suites/gemm.yaml:12:5"
  const Problem* problem = nullptr;
  Params params;                  // complete: suite values over defaults
  std::vector<const Variant*> variants;
  std::optional<std::string> reference;   // overrides Problem::reference_variant
  std::optional<Tolerance> tolerance;     // overrides Problem::tolerance
  MeasureSettings settings;
  std::vector<std::string> metrics;

  // "gemm/M:4096/N:4096/K:4096" (Google Benchmark's name/arg:value style)
  std::string id() const;
};

struct Suite {
  std::string name;
  std::string file;
  std::string description;
  MeasureSettings settings;
  std::string trace;              // settings.trace: timeline file of the run ("" = none)
  std::vector<std::string> metrics;
  std::vector<Case> cases;
};

Suite load_suite(const std::string& path, const Registry& registry);
// Several suites run as one: each loaded (and validated) in turn, their cases in order,
// named "a+b", with the first suite's settings and the first trace path given.
Suite load_suites(const std::vector<std::string>& paths, const Registry& registry);
Suite parse_suite(std::string_view yaml, const std::string& filename, const Registry& registry);

// Result names: "gemm/tiled/M:4096/N:4096/K:4096".
std::string result_name(const Case& c, const Variant& v);

}  // namespace harness
