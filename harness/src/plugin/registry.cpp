#include "harness/registry.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "harness/error.hpp"

namespace harness {

std::string_view to_string(Backend backend) { return backend == Backend::cpu ? "cpu" : "cuda"; }

Registry& Registry::instance() {
  static Registry registry;
  return registry;
}

void Registry::add_problem(std::unique_ptr<Problem> problem) {
  if (find_problem(problem->name()))
    throw InputError(fmt::format("problem '{}' is registered twice", problem->name()));
  const std::string name = problem->name();
  problems_.push_back(std::move(problem));
  // Variants that arrived first (static-init order across files) join now.
  std::vector<Variant> waiting;
  waiting.swap(pending_);
  for (auto& v : waiting) {
    if (v.problem == name) add_variant(std::move(v));
    else pending_.push_back(std::move(v));
  }
}

void Registry::add_variant(Variant variant) {
  if (!origin_.empty() && variant.origin == "built-in") variant.origin = origin_;
  if (!variant.launch)
    throw InputError(fmt::format("variant '{}' has no launch function", variant.full_name()));
  if (!find_problem(variant.problem)) {
    pending_.push_back(std::move(variant));
    return;
  }
  if (find_variant(variant.problem, variant.name))
    throw InputError(fmt::format("variant '{}' is registered twice (again from {})",
                                 variant.full_name(), variant.origin));
  variants_.push_back(std::make_unique<Variant>(std::move(variant)));
}

const Problem* Registry::find_problem(std::string_view name) const {
  for (const auto& p : problems_)
    if (p->name() == name) return p.get();
  return nullptr;
}

const Variant* Registry::find_variant(std::string_view problem, std::string_view name) const {
  for (const auto& v : variants_)
    if (v->problem == problem && v->name == name) return v.get();
  return nullptr;
}

std::vector<const Problem*> Registry::problems() const {
  std::vector<const Problem*> out;
  for (const auto& p : problems_) out.push_back(p.get());
  std::sort(out.begin(), out.end(), [](auto* a, auto* b) { return a->name() < b->name(); });
  return out;
}

std::vector<const Variant*> Registry::variants(std::string_view problem) const {
  std::vector<const Variant*> out;
  for (const auto& v : variants_)
    if (v->problem == problem) out.push_back(v.get());
  return out;
}

std::vector<std::string> Registry::problem_names() const {
  std::vector<std::string> out;
  for (const auto* p : problems()) out.push_back(p->name());
  return out;
}

std::vector<std::string> Registry::variant_names(std::string_view problem) const {
  std::vector<std::string> out;
  for (const auto* v : variants(problem)) out.push_back(v->name);
  return out;
}

namespace detail {
Registrar::Registrar(std::unique_ptr<Problem> problem) {
  Registry::instance().add_problem(std::move(problem));
}
Registrar::Registrar(Variant variant) { Registry::instance().add_variant(std::move(variant)); }
}  // namespace detail

}  // namespace harness
