#pragma once
// The core's Instance for problems that declare operands: host and device buffers for
// every operand, filled, uploaded, poisoned, restored and read back by the core.
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "harness/problem.hpp"

namespace harness {

class OperandInstance final : public Instance {
 public:
  OperandInstance(const Problem& problem, const Params& params, std::uint64_t seed);
  ~OperandInstance() override;
  OperandInstance(const OperandInstance&) = delete;
  OperandInstance& operator=(const OperandInstance&) = delete;

  void prepare(Backend backend) override;
  void reset_outputs(Backend backend, cudaStream_t stream) override;
  std::vector<Output> read_outputs(Backend backend) override;
  std::size_t device_bytes() const override { return device_bytes_; }
  Operands* operands(Backend backend) override;
  bool reseed(std::uint64_t seed) override;

 private:
  struct Slot {
    std::vector<std::byte> host;       // inputs: the filled values; in/out: the pristine copy
    std::vector<std::byte> host_out;   // the cpu backend's outputs and in/out working copy
    void* device = nullptr;            // the cuda backend's operand
    void* device_pristine = nullptr;   // in/out: the filled values, restored before each run
    std::vector<std::byte> other;      // reseed(): the inputs of the other seed, kept for the swap back
  };
  void upload_inputs();
  const Problem& problem_;
  Params params_;
  std::vector<OperandSpec> specs_;
  std::vector<Slot> slots_;
  bool cpu_ready_ = false, cuda_ready_ = false;
  Operands cpu_view_, cuda_view_;
  std::size_t device_bytes_ = 0;
  std::uint64_t seed_ = 0;             // the seed the inputs come from now
  std::optional<std::uint64_t> other_seed_;  // the seed of the slots' `other` inputs
};

}  // namespace harness
