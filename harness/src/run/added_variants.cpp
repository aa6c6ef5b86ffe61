#include "run/added_variants.hpp"

#include <algorithm>
#include <set>

namespace harness {

namespace {

// Every variant registered so far, of every problem.
std::set<const Variant*> all_variants(const Registry& registry) {
  std::set<const Variant*> out;
  for (const Problem* problem : registry.problems())
    for (const Variant* v : registry.variants(problem->name())) out.insert(v);
  return out;
}

}  // namespace

Suite load_suites_with_added(const std::vector<std::string>& suites, Registry& registry,
                             const std::function<void(Registry&)>& add_variants) {
  if (!add_variants) return load_suites(suites, registry);
  const std::set<const Variant*> before = all_variants(registry);
  add_variants(registry);
  Suite suite = load_suites(suites, registry);
  for (Case& c : suite.cases)
    for (const Variant* v : registry.variants(c.problem->name()))
      if (!before.count(v) && std::find(c.variants.begin(), c.variants.end(), v) == c.variants.end())
        c.variants.push_back(v);
  return suite;
}

}  // namespace harness
