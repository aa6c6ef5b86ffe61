#pragma once
// A Variant is one implementation of a problem (`gemm/tiled`): a backend, a description,
// optional constraints (a skip reason for unsupported parameters) and a launch function.
#include <cstddef>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include <cuda_runtime_api.h>

#include "harness/operands.hpp"
#include "harness/params.hpp"
#include "harness/problem.hpp"
#include "harness/workspace.hpp"

namespace harness {

// What a launch function gets: the stream, scratch memory, the parameters, and the
// operands on its backend (host pointers for cpu variants, device pointers for cuda).
struct LaunchContext {
  cudaStream_t stream = nullptr;   // the one stream every CUDA variant runs on
  Workspace* workspace = nullptr;  // scratch beyond inputs/outputs (tracked)
  const Params* params = nullptr;
  Operands* operands = nullptr;    // null for problems that keep their own buffers
  Instance* instance = nullptr;

  // Typed operand pointers: ctx.in<float>("A"), ctx.out<__nv_bfloat16>("C").
  template <class T>
  const T* in(std::string_view name) const { return checked_operands().in<T>(name); }
  template <class T>
  T* out(std::string_view name) const { return checked_operands().out<T>(name); }
  std::int64_t param_int(std::string_view name) const { return params->get_int(name); }
  double param_float(std::string_view name) const { return params->get_float(name); }
  const std::string& param_string(std::string_view name) const { return params->get_string(name); }

 private:
  const Operands& checked_operands() const {
    if (operands == nullptr) throw std::logic_error("this problem declares no operands (it keeps its own buffers)");
    return *operands;
  }
};

// A launch function: `void(LaunchContext&)`. The older form `void(Instance&,
// LaunchContext&)`, for problems with their own Instance, is accepted too.
class LaunchFn {
 public:
  LaunchFn() = default;
  LaunchFn(std::nullptr_t) {}
  template <class F, class = std::enable_if_t<!std::is_same_v<std::decay_t<F>, LaunchFn> &&
                                              !std::is_same_v<std::decay_t<F>, std::nullptr_t>>>
  LaunchFn(F f) {
    if constexpr (std::is_invocable_v<F&, LaunchContext&>) {
      fn_ = std::move(f);
    } else {
      static_assert(std::is_invocable_v<F&, Instance&, LaunchContext&>,
                    "a launch function takes (LaunchContext&) or (Instance&, LaunchContext&)");
      fn_ = [g = std::move(f)](LaunchContext& ctx) mutable { g(*ctx.instance, ctx); };
    }
  }
  void operator()(LaunchContext& ctx) const { fn_(ctx); }
  explicit operator bool() const { return static_cast<bool>(fn_); }

 private:
  std::function<void(LaunchContext&)> fn_;
};

// Why these parameters are unsupported, or nothing when they are supported.
using ConstraintFn = std::function<std::optional<std::string>(const Params&)>;
// Scratch bytes the variant will ask for at these parameters (skip before allocating).
using WorkspaceFn = std::function<std::size_t(const Params&)>;
// The configuration a variant chooses at these parameters, as text ("splitk tile=128x64
// splits=8"), recorded in each result ("config" in the JSON report) so that a tuned or
// shape-dispatching variant's choice is reproducible from the report.
using ConfigFn = std::function<std::string(const Params&)>;

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
  ConfigFn config = nullptr;      // optional: the chosen configuration (last, so that
                                  // aggregate initialisation without it still compiles)

  std::string full_name() const { return problem + "/" + name; }
};

// The one way to describe a variant, for the registration macros and for direct
// Registry::add_variant calls alike: the problem, name, backend and launch, then only what
// it needs, by name:
//
//   registry.add_variant(harness::make_variant("gemm", "tiled", harness::Backend::cuda, launch_tiled)
//                            .description("shared-memory tiling")
//                            .constraint(tiled_constraint)     // optional: a skip reason
//                            .workspace(tiled_workspace)       // optional: scratch bytes
//                            .config(tiled_config));           // optional: the chosen config
class VariantBuilder {
 public:
  VariantBuilder(std::string problem, std::string name, Backend backend, LaunchFn launch) {
    v_.problem = std::move(problem);
    v_.name = std::move(name);
    v_.backend = backend;
    v_.launch = std::move(launch);
  }
  VariantBuilder& description(std::string text) { v_.description = std::move(text); return *this; }
  VariantBuilder& constraint(ConstraintFn fn) { v_.constraint = std::move(fn); return *this; }
  VariantBuilder& workspace(WorkspaceFn fn) { v_.workspace_bytes = std::move(fn); return *this; }
  VariantBuilder& config(ConfigFn fn) { v_.config = std::move(fn); return *this; }
  // A reference for checks only: not part of `variants: all`.
  VariantBuilder& reference_only(bool on = true) { v_.reference_only = on; return *this; }

  const Variant& variant() const { return v_; }
  operator Variant() const { return v_; }  // NOLINT: add_variant(make_variant(...)...)

 private:
  Variant v_;
};

inline VariantBuilder make_variant(std::string problem, std::string name, Backend backend, LaunchFn launch) {
  return VariantBuilder(std::move(problem), std::move(name), backend, std::move(launch));
}

// Runs `variant` once on `instance` (already prepared for the variant's backend), as the
// runner does between reset_outputs and read_outputs. For tests and tools.
inline void launch_on(const Variant& variant, Instance& instance, LaunchContext ctx) {
  ctx.instance = &instance;
  ctx.operands = instance.operands(variant.backend);
  variant.launch(ctx);
}

}  // namespace harness
