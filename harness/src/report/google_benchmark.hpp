#pragma once
// Google Benchmark JSON ("benchmarks": [...]) read as Results: one per run name, the
// iterations as samples, or with aggregates only the median (else the mean) as the time.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "types/result.hpp"

namespace harness {

// Throws InputError (message starting with `path`) for an entry that is not an object,
// has no name, no numeric real_time, or an unknown time_unit.
std::vector<Result> google_benchmark_results(const nlohmann::json& benchmarks, const std::string& path);

}  // namespace harness
