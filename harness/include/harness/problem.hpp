#pragma once
// A Problem is a family (`stream`, `gemm`, `attention`): its parameters, its named
// operands (dtype, shape, how inputs are filled, which outputs are in/out), the work one
// run does, the tolerance and the reference. The core owns the operands' buffers.
//
// An Instance is one problem at one set of parameters: the core builds it from the
// declared operands (make_instance's default). A problem with special needs (a training
// step that owns a whole model, say) overrides make_instance and implements Instance
// itself; each step (prepare, reset, read back) can then be taken over.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <cuda_runtime_api.h>
#include <nlohmann/json.hpp>

#include "harness/check.hpp"
#include "harness/operands.hpp"
#include "harness/params.hpp"

namespace harness {

// The minimum work of one run: operations and the bytes that must cross device memory
// (each input read once, each output written once). Rates and the roofline come from it.
struct Work {
  double flops = 0;
  double bytes = 0;
};

class Instance {
 public:
  virtual ~Instance() = default;
  // Make the inputs resident for `backend` (upload once; called before the first run).
  virtual void prepare(Backend backend) = 0;
  // Poison this backend's outputs and restore any in/out operand so that the next run
  // starts from the original inputs (enqueued on `stream` for cuda).
  virtual void reset_outputs(Backend backend, cudaStream_t stream) = 0;
  // This backend's outputs, copied to the host. The runner has synchronized the launch
  // stream before it asks.
  virtual std::vector<Output> read_outputs(Backend backend) = 0;
  // Refill the inputs as if the instance had been built with `seed`, on every backend
  // already prepared (derived inputs recomputed). The runner calls it after a variant's
  // timed runs to check it once more on inputs it has never seen (a variant that caches
  // its result fails), then once more with the original seed. False: this instance
  // cannot (it keeps its own inputs), and the re-check is reported as not run.
  virtual bool reseed(std::uint64_t /*seed*/) { return false; }
  // Device bytes held for inputs and outputs (memory accounting).
  virtual std::size_t device_bytes() const { return 0; }
  // The operands on `backend` (nullptr for an instance that keeps its own buffers).
  virtual Operands* operands(Backend) { return nullptr; }
  // Problem-specific figures for the report, asked for after the timed runs of a variant
  // (the training benchmark's phase times, tokens/s, allocator counts, loss curve);
  // null when there are none. They land in the result's "extra" object.
  virtual nlohmann::json extra() { return nullptr; }
};

class Problem {
 public:
  virtual ~Problem() = default;
  virtual std::string name() const = 0;
  virtual std::string description() const = 0;
  virtual std::vector<ParamSpec> params() const = 0;
  // Rules across parameters ("kv_heads must divide heads"); a message when violated.
  // The suite loader reports it as an input error before any work.
  virtual std::optional<std::string> reject(const Params&) const { return std::nullopt; }

  // The named operands at these parameters, in the order the generator streams are
  // numbered (stream id = position + 1 unless the fill names one). Sizes are checked by
  // the core (overflow: an input error at load; too large for the device or the host: a
  // skip before anything is allocated).
  virtual std::vector<OperandSpec> operands(const Params&) const { return {}; }
  // Called once when the inputs of `backend` are resident, before any run: derives
  // inputs that are computed from other inputs (attention_backward's O and LSE from the
  // forward kernel). The core synchronizes afterwards.
  virtual void finish_inputs(Operands&, const Params&, cudaStream_t) const {}

  // The default builds the core's instance from operands(); override for special needs.
  virtual std::unique_ptr<Instance> make_instance(const Params& params, std::uint64_t seed) const;
  virtual Work work(const Params& params) const = 0;
  // The tolerance of floating outputs (integers are exact unless an operand says otherwise).
  virtual Tolerance tolerance(const Params& params) const = 0;
  // The variant whose output the others are checked against at these parameters.
  virtual std::string reference_variant(const Params& params) const = 0;
  // Device bytes of an instance that keeps its own buffers (0 when unknown); problems
  // with operands are counted by the core.
  virtual std::size_t device_bytes(const Params&) const { return 0; }
  // How the tolerance was chosen, for `harness list` and the docs.
  virtual std::string tolerance_rule() const { return {}; }
  // A collective (NCCL): one instance per rank, every rank runs the case in step. Under
  // `harness run --devices` such a case runs on every worker at once and the ranks'
  // results merge into one (extra.bytes and extra.bus_factor give algbw and busbw).
  virtual bool collective() const { return false; }
  // The same per case, for a problem that is a collective at some parameters only
  // (train_transformer at world_size > 1); the runner and the launcher ask this one.
  virtual bool collective_at(const Params&) const { return collective(); }
};

// The bytes an instance of `problem` at `params` will need: from its operands where it
// declares them, else the problem's own device_bytes(). InputError on overflow.
OperandBytes memory_need(const Problem& problem, const Params& params);

}  // namespace harness
