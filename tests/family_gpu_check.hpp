#pragma once
#include <algorithm>
// Every CUDA variant of a problem against its cpu variant, through the registry, at the
// given parameters: the shared body of the softmax and optimizer GPU tests.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "family_support.hpp"

namespace harness::test {

// Returns how many CUDA variants ran and were compared (skipped ones print their reason).
// `except`: variants left out (with the reason printed by the caller).
inline int check_cuda_variants_against_cpu(const std::string& problem_name, const Params& params,
                                           const std::vector<std::string>& except = {}) {
  const Problem& problem = problem_named(problem_name);
  const Variant* cpu = Registry::instance().find_variant(problem_name, "cpu");
  EXPECT_NE(cpu, nullptr);
  auto inst = problem.make_instance(params, 2024);
  inst->prepare(Backend::cpu);
  inst->prepare(Backend::cuda);
  const auto want = run_once(*cpu, *inst, params);
  const Tolerance tol = problem.tolerance(params);
  int compared = 0;
  for (const Variant* v : Registry::instance().variants(problem_name)) {
    if (v->backend != Backend::cuda || v->reference_only) continue;
    if (std::find(except.begin(), except.end(), v->name) != except.end()) continue;
    if (v->constraint) {
      if (const auto why = v->constraint(params)) {
        std::printf("  %s at %s: skipped: %s\n", v->full_name().c_str(), params.describe().c_str(), why->c_str());
        continue;
      }
    }
    Workspace workspace;
    const auto got = run_once(*v, *inst, params, &workspace);
    const CheckResult r = compare_outputs(got, want, tol);
    EXPECT_TRUE(r.passed) << v->full_name() << " at " << params.describe() << ": " << r.summary();
    ++compared;
  }
  return compared;
}

}  // namespace harness::test
