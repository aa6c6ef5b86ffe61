#include "operands/operand_instance.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include <fmt/format.h>

#include "harness/cuda_check.hpp"
#include "harness/error.hpp"
#include "operands/fill.hpp"

namespace harness {

OperandInstance::OperandInstance(const Problem& problem, const Params& params, std::uint64_t seed)
    : problem_(problem), params_(params), specs_(problem.operands(params)), slots_(specs_.size()), seed_(seed) {
  for (std::size_t i = 0; i < specs_.size(); ++i) {
    const OperandSpec& s = specs_[i];
    if (s.role == Role::output) continue;
    slots_[i].host.resize(s.bytes());
    fill_elements(slots_[i].host, s.dtype, s.fill, seed, s.fill.stream ? s.fill.stream : i + 1);
  }
}

OperandInstance::~OperandInstance() {
  for (auto& slot : slots_) {
    if (slot.device) HARNESS_CUDA_NOTHROW(cudaFree(slot.device));
    if (slot.device_pristine) HARNESS_CUDA_NOTHROW(cudaFree(slot.device_pristine));
  }
}

void OperandInstance::prepare(Backend backend) {
  std::vector<Operands::Entry> entries;
  if (backend == Backend::cpu) {
    if (cpu_ready_) return;
    for (std::size_t i = 0; i < specs_.size(); ++i) {
      Slot& slot = slots_[i];
      if (specs_[i].is_output()) slot.host_out.resize(specs_[i].bytes());
      entries.push_back({&specs_[i], specs_[i].is_output() ? slot.host_out.data() : slot.host.data()});
    }
    cpu_view_ = Operands(Backend::cpu, std::move(entries));
    problem_.finish_inputs(cpu_view_, params_, nullptr);
    cpu_ready_ = true;
    return;
  }
  if (cuda_ready_) return;
  for (std::size_t i = 0; i < specs_.size(); ++i) {
    const OperandSpec& s = specs_[i];
    Slot& slot = slots_[i];
    const std::size_t bytes = std::max<std::size_t>(s.bytes(), 1);
    auto allocate = [&](void** p) {
      const cudaError_t e = cudaMalloc(p, bytes);
      if (e == cudaErrorMemoryAllocation) {
        (void)cudaGetLastError();
        throw OutOfMemory(fmt::format("out of memory allocating operand {} ({} bytes)", s.name, bytes));
      }
      HARNESS_CUDA(e);
      device_bytes_ += bytes;
    };
    allocate(&slot.device);
    if (s.role == Role::inout) allocate(&slot.device_pristine);
    entries.push_back({&s, slot.device});
  }
  upload_inputs();
  cuda_view_ = Operands(Backend::cuda, std::move(entries));
  problem_.finish_inputs(cuda_view_, params_, nullptr);
  HARNESS_CUDA(cudaDeviceSynchronize());
  cuda_ready_ = true;
}

// The post-timing re-check alternates between two seeds (fresh inputs for the re-check,
// the original ones for the next variant), so the other seed's inputs are kept on the
// host and swapped in place: one fill per case, not two per variant, and every pointer a
// launch function sees stays the same (a variant that caches by pointer still fails).
bool OperandInstance::reseed(std::uint64_t seed) {
  if (seed == seed_) return true;
  for (std::size_t i = 0; i < specs_.size(); ++i) {
    const OperandSpec& s = specs_[i];
    Slot& slot = slots_[i];
    if (s.role == Role::output) continue;
    if (other_seed_ == seed) {
      std::swap_ranges(slot.host.begin(), slot.host.end(), slot.other.begin());
    } else {
      slot.other = slot.host;
      fill_elements(slot.host, s.dtype, s.fill, seed, s.fill.stream ? s.fill.stream : i + 1);
    }
  }
  other_seed_ = seed_;
  seed_ = seed;
  // Derived inputs (attention_backward's O and LSE) follow the new inputs on each backend.
  if (cpu_ready_) problem_.finish_inputs(cpu_view_, params_, nullptr);
  if (cuda_ready_) {
    upload_inputs();
    problem_.finish_inputs(cuda_view_, params_, nullptr);
    HARNESS_CUDA(cudaDeviceSynchronize());
  }
  return true;
}

void OperandInstance::upload_inputs() {
  for (std::size_t i = 0; i < specs_.size(); ++i) {
    const OperandSpec& s = specs_[i];
    Slot& slot = slots_[i];
    if (s.role != Role::output)
      HARNESS_CUDA(cudaMemcpy(s.role == Role::inout ? slot.device_pristine : slot.device, slot.host.data(),
                              slot.host.size(), cudaMemcpyHostToDevice));
  }
}

void OperandInstance::reset_outputs(Backend backend, cudaStream_t stream) {
  for (std::size_t i = 0; i < specs_.size(); ++i) {
    const OperandSpec& s = specs_[i];
    Slot& slot = slots_[i];
    if (!s.is_output()) continue;
    if (backend == Backend::cpu) {
      if (s.role == Role::inout) std::memcpy(slot.host_out.data(), slot.host.data(), slot.host.size());
      else poison_bytes(slot.host_out);
    } else if (s.role == Role::inout) {
      HARNESS_CUDA(cudaMemcpyAsync(slot.device, slot.device_pristine, s.bytes(), cudaMemcpyDeviceToDevice, stream));
    } else {
      HARNESS_CUDA(cudaMemsetAsync(slot.device, kPoisonByte, s.bytes(), stream));
    }
  }
}

std::vector<Output> OperandInstance::read_outputs(Backend backend) {
  std::vector<Output> out;
  for (std::size_t i = 0; i < specs_.size(); ++i) {
    const OperandSpec& s = specs_[i];
    if (!s.is_output()) continue;
    Output o;
    o.name = s.name;
    o.dtype = s.dtype;
    o.tolerance = s.tolerance;
    o.sample = s.sample;
    o.sampled = s.sample.active();
    if (backend == Backend::cpu) {
      o.data = slots_[i].host_out;
    } else {
      o.data.resize(s.bytes());
      if (!o.data.empty()) HARNESS_CUDA(cudaMemcpy(o.data.data(), slots_[i].device, o.data.size(), cudaMemcpyDeviceToHost));
    }
    out.push_back(std::move(o));
  }
  return out;
}

Operands* OperandInstance::operands(Backend backend) {
  if (backend == Backend::cpu) return cpu_ready_ ? &cpu_view_ : nullptr;
  return cuda_ready_ ? &cuda_view_ : nullptr;
}

std::unique_ptr<Instance> Problem::make_instance(const Params& params, std::uint64_t seed) const {
  if (operands(params).empty())
    throw std::logic_error(fmt::format("problem '{}' declares no operands and does not override make_instance", name()));
  return std::make_unique<OperandInstance>(*this, params, seed);
}

OperandBytes memory_need(const Problem& problem, const Params& params) {
  const auto specs = problem.operands(params);
  if (specs.empty()) return {problem.device_bytes(params), 0};
  return operand_bytes(specs);
}

}  // namespace harness
