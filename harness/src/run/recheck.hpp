#pragma once
// The check after timing (issue 33, "kernels that cheat"): the timed runs leave a variant
// every chance to remember its output, so after them it runs once more on inputs from
// another seed, with poisoned outputs, and is checked against the reference on those
// inputs. A variant that caches its result (or writes nothing and leaves the previous
// run's output) fails here although it passed the check before timing.
//
// Cost: per case one fill of the fresh inputs and one reference run on them (kept for
// the case's other variants, with the same sampled rows as the first reference); per
// variant two input swaps (host copies, one upload each way) and one run and check.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "harness/check.hpp"
#include "harness/problem.hpp"
#include "harness/variant.hpp"
#include "types/result.hpp"

namespace harness {

// The seed of the fresh inputs: the run's seed with its bits mixed (53 bits, exact in
// JSON), so that it differs from every seed a suite is likely to use next to it.
std::uint64_t fresh_seed(std::uint64_t seed);

// One run of `v` from poisoned outputs (in/out operands restored), synchronized and read
// back: the reference run, the check before timing and the re-check after it.
std::vector<Output> checked_run(Instance& inst, const Variant& v, LaunchContext& ctx);

// The reference's outputs on the fresh inputs, computed by the first re-check of a case.
struct FreshReference {
  std::optional<std::vector<Output>> outputs;
  std::optional<std::string> problem;  // why there is none (the re-checks then do not run)
};

// Runs `v` through `ctx` (its own workspace, as in the timed runs) on fresh inputs and
// records the outcome in r.integrity; a mismatch makes `r` failed with the reason
// "failed after timing: ...". The instance's inputs are back on `seed` afterwards, also
// when the variant throws (CUDA errors propagate, as from any run).
void recheck_on_fresh_inputs(Instance& inst, const Variant& v, LaunchContext& ctx, const Variant& reference,
                             const Tolerance& tolerance, std::uint64_t seed, FreshReference& fresh, Result& r);

}  // namespace harness
