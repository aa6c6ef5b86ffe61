#pragma once
// A Problem is a family (`stream`, `gemm`, `attention`): its parameters, its inputs built
// deterministically from (params, seed), its outputs and how they are checked, and the
// work it does. An Instance is one problem at one set of parameters, holding the inputs,
// the outputs of each backend, and whatever the variants' launch functions need.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <cuda_runtime_api.h>
#include <nlohmann/json.hpp>

#include "harness/params.hpp"

namespace harness {

enum class Backend { cpu, cuda };
std::string_view to_string(Backend backend);

// The minimum work of one run: operations and the bytes that must cross device memory
// (each input read once, each output written once). Rates and the roofline come from it.
struct Work {
  double flops = 0;
  double bytes = 0;
};

// A result element passes when |got - ref| <= abs + rel * |ref|.
struct Tolerance {
  double abs = 0;
  double rel = 0;
};

// One output tensor copied to the host, for checking. `sampled`: only a sample of the
// tensor's elements (e.g. some rows, where a full reference is out of reach); the check
// then says it was a sampled check.
struct Output {
  std::string name;
  std::vector<float> values;
  bool sampled = false;
};

// Outputs are poisoned with this byte before every run; an element whose bits are all
// 0xFF (a NaN no arithmetic produces) was never written.
inline constexpr unsigned char kPoisonByte = 0xFF;
inline constexpr std::uint32_t kPoisonBits = 0xFFFFFFFFu;

class Instance {
 public:
  virtual ~Instance() = default;
  // Make the inputs resident for `backend` (upload once; called before the first run).
  virtual void prepare(Backend backend) = 0;
  // Poison this backend's outputs and restore any in/out operand (gemm's C when
  // beta != 0) so that the next run starts from the original inputs.
  virtual void reset_outputs(Backend backend, cudaStream_t stream) = 0;
  // This backend's outputs, copied to the host (synchronizes).
  virtual std::vector<Output> read_outputs(Backend backend) = 0;
  // Device bytes held for inputs and outputs (memory accounting).
  virtual std::size_t device_bytes() const { return 0; }
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
  virtual std::optional<std::string> reject(const Params&) const { return std::nullopt; }

  virtual std::unique_ptr<Instance> make_instance(const Params& params,
                                                  std::uint64_t seed) const = 0;
  virtual Work work(const Params& params) const = 0;
  virtual Tolerance tolerance(const Params& params) const = 0;
  // The variant whose output the others are checked against at these parameters.
  virtual std::string reference_variant(const Params& params) const = 0;
  // Device bytes the inputs and outputs need (checked against free memory before
  // allocating; 0 when unknown).
  virtual std::size_t device_bytes(const Params&) const { return 0; }
  // How the tolerance was chosen, for `harness list` and the docs.
  virtual std::string tolerance_rule() const { return {}; }
};

}  // namespace harness
