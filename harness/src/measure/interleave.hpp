#pragma once
// interleave: true. The variants of a case sampled in rounds, A B C A B C ..., one batch
// of each per round, instead of each variant's samples back to back: a slow drift (the
// SM clock sinking under a power cap, the GPU warming, a busy host) then falls on every
// variant alike, and the ratio between two variants is not the drift between the times
// they ran. Each variant keeps its own stopping rule and time cap (measure.hpp's
// BatchedTiming counts its own batches' time only): a variant that is done leaves the
// rounds and the others go on.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

namespace harness {

// Calls step(i) for i = 0..n-1 in rounds, skipping those that are done, until every one
// is; step(i) advances result i by one batch and returns true once it is finished (or
// failed). Without shuffle_seed each round goes 0, 1, .., n - 1; with it, each round takes
// the unfinished results in a fresh permutation (Fisher-Yates on std::mt19937_64 seeded
// with it: the same seed, the same orders). Returns per result the number of rounds it
// took part in (its steps).
std::vector<std::size_t> run_in_rounds(std::size_t n, const std::function<bool(std::size_t)>& step,
                                       std::optional<std::uint64_t> shuffle_seed = std::nullopt);

}  // namespace harness
