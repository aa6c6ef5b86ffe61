#pragma once
// Driving a problem through the registry as the runner does (make_instance, prepare,
// reset_outputs, launch_on, read_outputs), for the tests of the softmax and optimizer
// families.
#include <string>
#include <vector>

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include "harness/check.hpp"
#include "harness/registry.hpp"
#include "harness/workspace.hpp"

namespace harness::test {

// By name; a const char* overload so that a literal argument makes no temporary string
// (GCC 13's -Wdangling-reference takes a reference returned next to a temporary for one).
inline const Problem& problem_named(const char* name) {
  const Problem* p = Registry::instance().find_problem(name);
  if (p == nullptr) throw std::logic_error(std::string("no problem ") + name);
  return *p;
}
inline const Problem& problem_named(const std::string& name) { return problem_named(name.c_str()); }

inline Params params_of(const Problem& problem, const Params& values) { return with_defaults(problem.params(), values); }

// Runs `variant` once on `instance` (prepared for its backend) and returns its outputs.
inline std::vector<Output> run_once(const Variant& variant, Instance& instance, const Params& params,
                                    Workspace* workspace = nullptr) {
  instance.reset_outputs(variant.backend, nullptr);
  LaunchContext ctx;
  ctx.params = &params;
  ctx.workspace = workspace;
  launch_on(variant, instance, ctx);
  if (variant.backend == Backend::cuda) {
    const cudaError_t e = cudaDeviceSynchronize();
    EXPECT_EQ(e, cudaSuccess) << variant.full_name() << ": " << cudaGetErrorString(e);
  }
  return instance.read_outputs(variant.backend);
}

}  // namespace harness::test
