#include "run/recheck.hpp"

#include <fmt/format.h>

#include "harness/cuda_check.hpp"
#include "harness/error.hpp"
#include "harness/workspace.hpp"

namespace harness {

std::uint64_t fresh_seed(std::uint64_t seed) {
  std::uint64_t x = seed + 0x9E3779B97F4A7C15ull;  // SplitMix64's finalizer: never `seed` itself in practice
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  // 53 bits: exact as a JSON number, so the report's recheck_seed can be passed to --seed.
  return (x ^ (x >> 31)) & ((std::uint64_t{1} << 53) - 1);
}

std::vector<Output> checked_run(Instance& inst, const Variant& v, LaunchContext& ctx) {
  inst.reset_outputs(v.backend, ctx.stream);
  v.launch(ctx);
  if (v.backend == Backend::cuda) {
    HARNESS_CUDA(cudaGetLastError());
    HARNESS_CUDA(cudaStreamSynchronize(ctx.stream));
  }
  return inst.read_outputs(v.backend);
}

namespace {

void compute_fresh_reference(Instance& inst, const Variant& ref, LaunchContext& variant_ctx, FreshReference& fresh) {
  try {
    Workspace ws;
    inst.prepare(ref.backend);
    LaunchContext ctx{variant_ctx.stream, &ws, variant_ctx.params, inst.operands(ref.backend), &inst};
    fresh.outputs = checked_run(inst, ref, ctx);
  } catch (const CudaError& e) {
    if (e.sticky()) throw;  // the context is gone: the caller reports the crash
    fresh.problem = fmt::format("the reference '{}' failed on fresh inputs: {}", ref.name, e.what());
  } catch (const std::exception& e) {
    fresh.problem = fmt::format("the reference '{}' failed on fresh inputs: {}", ref.name, e.what());
  }
}

// Puts the original inputs back whatever happens in between.
struct SeedRestore {
  Instance& inst;
  std::uint64_t seed;
  ~SeedRestore() {
    try {
      inst.reseed(seed);
    } catch (...) {
      // Only a CUDA failure can land here, and the run's own error path reports it.
    }
  }
};

}  // namespace

void recheck_on_fresh_inputs(Instance& inst, const Variant& v, LaunchContext& ctx, const Variant& reference,
                             const Tolerance& tolerance, std::uint64_t seed, FreshReference& fresh, Result& r) {
  Integrity& in = r.integrity;
  in.recheck_seed = fresh_seed(seed);
  if (fresh.problem) {
    in.recheck_note = "not run: " + *fresh.problem;
    return;
  }
  if (!inst.reseed(in.recheck_seed)) {
    in.recheck_note = "not run: this problem's instance keeps its own inputs (it cannot be reseeded)";
    return;
  }
  SeedRestore restore{inst, seed};
  if (!fresh.outputs) compute_fresh_reference(inst, reference, ctx, fresh);
  if (!fresh.outputs) {
    in.recheck_note = "not run: " + fresh.problem.value_or("no reference outputs");
    return;
  }
  const CheckResult check = compare_outputs(checked_run(inst, v, ctx), *fresh.outputs, tolerance);
  if (check.passed) {
    in.recheck = Recheck::passed;
    return;
  }
  in.recheck = Recheck::failed;
  in.recheck_note = check.summary();
  r.status = Status::failed;
  r.reason = "failed after timing: the output does not match fresh inputs (the variant may cache its result): " +
             check.summary();
}

}  // namespace harness
