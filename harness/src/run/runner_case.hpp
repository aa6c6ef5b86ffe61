#pragma once
// The state the runner keeps for one case (its inputs, the reference's outputs, the
// tolerance): shared by run/runner.cpp and run/runner_interleave.cpp.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "run/recheck.hpp"
#include "run/runner.hpp"

namespace harness {

struct Runner::CaseState {
  const Case& c;
  std::unique_ptr<Instance> instance;
  std::string reference_name;
  std::vector<Output> reference_outputs;
  std::optional<std::string> reference_problem;  // why nothing can be checked in this case
  Tolerance tolerance;
  Work work;
  const Variant* reference = nullptr;
  FreshReference fresh;  // the reference on fresh inputs, for the re-checks after timing
};

// A result with the identity of variant `v` in case `c` and no outcome yet.
Result base_result(const Case& c, const Variant& v);

// The profiling pass and the traced round of a result timed in rounds: an NVML clock
// reading every 5 ms while their kernels are traced.
inline constexpr double kProfileSensorPeriod = 0.005;

}  // namespace harness
