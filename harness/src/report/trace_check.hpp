#pragma once
// Checks a `harness run --trace` file against the report of the same run:
//  - nesting: the host ranges nest (each inside its parent or disjoint) and in the order
//    suite > case > variant > phase (check, warmup, timed, profile);
//  - alignment: every kernel, copy and fill lies inside the host range of the variant it
//    was recorded under (args.variant), i.e. the GPU clock was mapped onto the host clock;
//  - counts: per result, the kernels on the timeline equal the kernel breakdown's
//    launches (sum of calls per run x runs) of profile.kernels in the report;
//  - flows: every arrow end ("f") has its start ("s").
// Pure (no GPU): tested on synthetic traces, and applied to a real one by a GPU test.
#include <cstddef>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "report/report_model.hpp"

namespace harness {

struct TraceCheck {
  std::vector<std::string> problems;  // empty: the trace is consistent
  std::size_t ranges = 0, gpu_events = 0, kernels = 0, flows = 0, results_compared = 0;
  bool ok() const { return problems.empty(); }
};

TraceCheck check_trace(const nlohmann::json& trace, const Report& report);

}  // namespace harness
