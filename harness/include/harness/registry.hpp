#pragma once
// The registry of problems and variants: a function-local singleton filled by static
// registrars (no CUDA work happens at static-initialization time) and by plugins.
//
//   HARNESS_REGISTER_PROBLEM(GemmProblem);
//   HARNESS_REGISTER_VARIANT(gemm, tiled, cuda, "shared-memory tiling", launch_tiled);
//   HARNESS_REGISTER_VARIANT_IF(gemm, vectorized, cuda, "...", launch_vec, vec_constraint);
//   registry.add_variant(harness::make_variant("gemm", "auto", harness::Backend::cuda, launch)
//                            .description("...").config(describe_choice));   // at run time
// All of them build the Variant through make_variant (harness/variant.hpp).
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "harness/problem.hpp"
#include "harness/variant.hpp"

namespace harness {

class Registry {
 public:
  static Registry& instance();

  // Throws InputError on a duplicate name or a variant of an unknown problem.
  void add_problem(std::unique_ptr<Problem> problem);
  void add_variant(Variant variant);

  const Problem* find_problem(std::string_view name) const;
  const Variant* find_variant(std::string_view problem, std::string_view name) const;
  std::vector<const Problem*> problems() const;  // sorted by name
  std::vector<const Variant*> variants(std::string_view problem) const;  // registration order
  std::vector<std::string> problem_names() const;
  std::vector<std::string> variant_names(std::string_view problem) const;

  // Variants registered before their problem (static-init order is unspecified across
  // translation units) wait here until the problem arrives.
  std::size_t pending_variants() const { return pending_.size(); }

  // While set, problems and variants added without an origin are marked as coming from
  // `origin` (the plugin loader sets it to the library's path).
  void set_origin(std::string origin) { origin_ = std::move(origin); }
  // Where a problem came from: "built-in" or the plugin library's path ("" if unknown).
  std::string problem_origin(std::string_view name) const;

  // What is registered now; rollback(mark) removes everything added since (the loader
  // undoes a plugin whose registration failed half-way, so that nothing of it is used).
  struct Mark {
    std::size_t problems = 0, variants = 0, pending = 0;
  };
  Mark mark() const;
  void rollback(const Mark& mark);

 private:
  struct ProblemEntry {
    std::unique_ptr<Problem> problem;
    std::string origin;
  };
  Registry() = default;
  std::vector<ProblemEntry> problems_;
  std::vector<std::unique_ptr<Variant>> variants_;
  std::vector<Variant> pending_;
  std::string origin_;
};

namespace detail {
struct Registrar {
  explicit Registrar(std::unique_ptr<Problem> problem);
  explicit Registrar(Variant variant);
};
}  // namespace detail

}  // namespace harness

#define HARNESS_CONCAT_INNER(a, b) a##b
#define HARNESS_CONCAT(a, b) HARNESS_CONCAT_INNER(a, b)

#define HARNESS_REGISTER_PROBLEM(Type)                                                  \
  static const ::harness::detail::Registrar HARNESS_CONCAT(harness_problem_, __LINE__){ \
      std::unique_ptr<::harness::Problem>(new Type())}

// Every variant macro registers a make_variant(...) builder (harness/variant.hpp), as the
// direct Registry::add_variant calls do: HARNESS_REGISTER_VARIANT_WITH takes any builder,
//   HARNESS_REGISTER_VARIANT_WITH(harness::make_variant("gemm", "auto", harness::Backend::cuda, launch)
//                                     .description("...").config(describe_choice));
// and the short forms below fill the common cases.
#define HARNESS_REGISTER_VARIANT_WITH(builder_)                                         \
  static const ::harness::detail::Registrar HARNESS_CONCAT(harness_variant_, __LINE__) { \
    ::harness::Variant(builder_)                                                        \
  }

#define HARNESS_REGISTER_VARIANT_FULL(problem_, name_, backend_, description_, launch_, constraint_, workspace_) \
  HARNESS_REGISTER_VARIANT_WITH(                                                                                \
      ::harness::make_variant(#problem_, #name_, ::harness::Backend::backend_, launch_)                         \
          .description(description_)                                                                            \
          .constraint(constraint_)                                                                              \
          .workspace(workspace_))

// A variant that only serves as a reference (left out of `variants: all`).
#define HARNESS_REGISTER_REFERENCE_VARIANT(problem_, name_, backend_, description_, launch_, constraint_) \
  HARNESS_REGISTER_VARIANT_WITH(::harness::make_variant(#problem_, #name_, ::harness::Backend::backend_, launch_) \
                                    .description(description_)                                              \
                                    .constraint(constraint_)                                                \
                                    .reference_only())

#define HARNESS_REGISTER_VARIANT(problem_, name_, backend_, description_, launch_) \
  HARNESS_REGISTER_VARIANT_FULL(problem_, name_, backend_, description_, launch_, nullptr, nullptr)

#define HARNESS_REGISTER_VARIANT_IF(problem_, name_, backend_, description_, launch_, constraint_) \
  HARNESS_REGISTER_VARIANT_FULL(problem_, name_, backend_, description_, launch_, constraint_, nullptr)
