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

namespace {
// "the built-in problem" / "the problem from /path/lib.so"
std::string by_whom(const std::string& origin) {
  return origin == "built-in" ? "built in" : origin.empty() ? "registered already" : "registered by " + origin;
}
}  // namespace

void Registry::add_problem(std::unique_ptr<Problem> problem) {
  const std::string name = problem->name();
  if (find_problem(name)) {
    const std::string first = problem_origin(name);
    if (origin_.empty() && first == "built-in")
      throw InputError(fmt::format("problem '{}' is registered twice", name));
    throw InputError(fmt::format("problem '{}' is already {}", name, by_whom(first)));
  }
  problems_.push_back({std::move(problem), origin_.empty() ? std::string("built-in") : origin_});
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
  if (const Variant* first = find_variant(variant.problem, variant.name)) {
    // From a plugin, the loader names the file of the second registration.
    if (!origin_.empty())
      throw InputError(fmt::format("variant '{}' is already {}", variant.full_name(), by_whom(first->origin)));
    throw InputError(fmt::format("variant '{}' is already {} (again from {})", variant.full_name(),
                                 by_whom(first->origin), variant.origin));
  }
  variants_.push_back(std::make_unique<Variant>(std::move(variant)));
}

const Problem* Registry::find_problem(std::string_view name) const {
  for (const auto& p : problems_)
    if (p.problem->name() == name) return p.problem.get();
  return nullptr;
}

std::string Registry::problem_origin(std::string_view name) const {
  for (const auto& p : problems_)
    if (p.problem->name() == name) return p.origin;
  return {};
}

Registry::Mark Registry::mark() const { return {problems_.size(), variants_.size(), pending_.size()}; }

void Registry::rollback(const Mark& mark) {
  // Registration only appends (pending variants that join their problem move from
  // pending_ to variants_, and a plugin's pending variants can only join its own problems),
  // so truncating undoes it.
  if (variants_.size() > mark.variants) variants_.resize(mark.variants);
  if (problems_.size() > mark.problems) problems_.resize(mark.problems);
  if (pending_.size() > mark.pending) pending_.resize(mark.pending);
}

const Variant* Registry::find_variant(std::string_view problem, std::string_view name) const {
  for (const auto& v : variants_)
    if (v->problem == problem && v->name == name) return v.get();
  return nullptr;
}

std::vector<const Problem*> Registry::problems() const {
  std::vector<const Problem*> out;
  for (const auto& p : problems_) out.push_back(p.problem.get());
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
