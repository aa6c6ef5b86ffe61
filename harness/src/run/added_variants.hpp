#pragma once
// Variants the command line adds (--python files) and the suites they join.
#include <functional>
#include <string>
#include <vector>

#include "harness/registry.hpp"
#include "suite/suite.hpp"

namespace harness {

// Registers the command line's extra variants (`add_variants`, may be empty), then loads
// the suites. The added variants join every case of their problem, also where a suite
// lists its variants: the user loaded them to run them beside the suite's own (issue 35:
// `harness run suites/attention.yaml --python my_variants.py`); their constraints skip
// them, with the reason, where they do not apply.
Suite load_suites_with_added(const std::vector<std::string>& suites, Registry& registry,
                             const std::function<void(Registry&)>& add_variants);

}  // namespace harness
