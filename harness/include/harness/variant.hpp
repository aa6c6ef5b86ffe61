#pragma once
// A Variant is one implementation of a problem (`gemm/tiled`): a backend, a description,
// optional constraints (a skip reason for unsupported parameters) and a launch function.
#include <cstddef>
#include <functional>
#include <optional>
#include <string>

#include <cuda_runtime_api.h>

#include "harness/params.hpp"
#include "harness/problem.hpp"
#include "harness/workspace.hpp"

namespace harness {

struct LaunchContext {
  cudaStream_t stream = nullptr;  // the one stream every CUDA variant runs on
  Workspace* workspace = nullptr; // scratch beyond inputs/outputs (tracked)
  const Params* params = nullptr;
};

using LaunchFn = std::function<void(Instance&, LaunchContext&)>;
// Why these parameters are unsupported, or nothing when they are supported.
using ConstraintFn = std::function<std::optional<std::string>(const Params&)>;
// Scratch bytes the variant will ask for at these parameters (skip before allocating).
using WorkspaceFn = std::function<std::size_t(const Params&)>;

struct Variant {
  std::string problem;
  std::string name;
  Backend backend = Backend::cuda;
  std::string description;
  LaunchFn launch;
  ConstraintFn constraint;       // optional
  WorkspaceFn workspace_bytes;   // optional
  std::string origin = "built-in";  // or the plugin library it came from
  // A reference for checks only (e.g. a sampled CPU reference): not part of `variants: all`.
  bool reference_only = false;

  std::string full_name() const { return problem + "/" + name; }
};

}  // namespace harness
