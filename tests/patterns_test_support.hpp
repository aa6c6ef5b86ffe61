#pragma once
// Shared by the pattern-family tests (reduce, scan, histogram): build an instance of a
// registered problem, run a variant on it, compare with the reference variant.
#include <string>
#include <vector>

#include <cuda_runtime_api.h>

#include "harness/check.hpp"
#include "harness/registry.hpp"
#include "harness/workspace.hpp"

namespace harness::test {

inline const Problem& problem(const std::string& name) {
  const Problem* p = Registry::instance().find_problem(name);
  if (p == nullptr) throw std::logic_error("no problem " + name);
  return *p;
}

inline Params params_of(const std::string& problem_name, const std::vector<std::pair<std::string, ParamValue>>& kv) {
  Params p;
  for (const auto& [k, v] : kv) p.set(k, v);
  return with_defaults(problem(problem_name).params(), p);
}

// The outputs of `variant` run once on a fresh instance (seed fixed).
inline std::vector<Output> run_variant(const std::string& problem_name, const std::string& variant,
                                       const Params& params, std::uint64_t seed = 42) {
  const Variant* v = Registry::instance().find_variant(problem_name, variant);
  if (v == nullptr) throw std::logic_error("no variant " + problem_name + "/" + variant);
  auto instance = problem(problem_name).make_instance(params, seed);
  instance->prepare(v->backend);
  instance->reset_outputs(v->backend, nullptr);
  Workspace workspace;
  LaunchContext ctx;
  ctx.params = &params;
  ctx.workspace = &workspace;
  launch_on(*v, *instance, ctx);
  if (v->backend == Backend::cuda && cudaDeviceSynchronize() != cudaSuccess)
    throw std::runtime_error(std::string("device error: ") + cudaGetErrorString(cudaGetLastError()));
  return instance->read_outputs(v->backend);
}

// `variant` against the problem's reference variant at `params`, with its tolerance.
inline CheckResult check_variant(const std::string& problem_name, const std::string& variant, const Params& params) {
  const Problem& p = problem(problem_name);
  const auto want = run_variant(problem_name, p.reference_variant(params), params);
  const auto got = run_variant(problem_name, variant, params);
  return compare_outputs(got, want, p.tolerance(params));
}

inline std::vector<std::string> cuda_variants(const std::string& problem_name) {
  std::vector<std::string> names;
  for (const Variant* v : Registry::instance().variants(problem_name))
    if (v->backend == Backend::cuda) names.push_back(v->name);
  return names;
}

}  // namespace harness::test
