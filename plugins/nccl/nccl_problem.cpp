// The nccl family: NCCL's collectives as problems. Each rank keeps its own buffers (the
// core's operands are one process's): its input is the deterministic fill of its rank
// (kernels/nccl/collectives.hpp), its output is checked exactly against the host's
// expected result for that rank (`cpu`, the reference). Parameters follow nccl-tests:
// `bytes` is the size nccl-tests reports (the larger buffer of a rank), and extra carries
// `bytes` and `bus_factor` so that the merged result states algbw = bytes / time and
// busbw = algbw * bus_factor for every rank (run/devices.cpp: merge_collective).
// Each problem registers the job's barrier (World::barrier), so that the runner times it
// as nccl-tests does: per sample a barrier, then K back-to-back ops between one event pair
// (harness/src/measure/collective.hpp).
// The buffers are also the instance's operands on the cuda backend (operands()), so that a
// Python variant (examples/python/torch_distributed.py: torch.distributed) reaches them as
// every Python variant reaches a problem's buffers; the C++ variant uses them directly.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "harness/collective.hpp"
#include "harness/cuda_check.hpp"
#include "harness/error.hpp"
#include "harness/problem.hpp"
#include "harness/registry.hpp"
#include "nccl/collectives.hpp"
#include "nccl/nccl_comm.hpp"

namespace {

namespace kn = kernels::nccl;
using kn::Collective;

kn::Dtype dtype_of(const harness::Params& p) { return p.get_string("dtype") == "bf16" ? kn::Dtype::bf16 : kn::Dtype::f32; }
int world_size() { return std::max(kn::World::get().env().size, 1); }
kn::Counts counts_of(Collective c, const harness::Params& p) {
  return kn::counts(c, static_cast<std::size_t>(p.get_int("bytes")), kn::elem_bytes(dtype_of(p)), world_size());
}
bool no_in_place(Collective c) { return c == Collective::alltoall || c == Collective::sendrecv; }

float bf16_to_float(std::uint16_t bits) {
  const std::uint32_t u = static_cast<std::uint32_t>(bits) << 16;
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

// One rank's buffers for one case. In place follows NCCL's convention: all_gather's input
// is its slice of the output (recv + rank * chunk), reduce_scatter's output is its slice of
// the input (send + rank * chunk), the others use one buffer for both.
class CollectiveInstance final : public harness::Instance {
 public:
  CollectiveInstance(Collective c, const harness::Params& p)
      : c_(c), t_(dtype_of(p)), in_place_(p.get_bool("in_place")), k_(counts_of(c, p)),
        rank_(kn::World::get().env().rank), n_(world_size()) {}
  ~CollectiveInstance() override {
    if (send_) (void)cudaFree(send_);
    if (recv_) (void)cudaFree(recv_);
  }

  void prepare(harness::Backend backend) override {
    if (backend == harness::Backend::cpu) {
      if (expected_.empty()) expected_ = kn::expected_output(c_, k_, rank_, n_);
      return;
    }
    if (send_ || recv_) return;
    kn::World::get().ensure_initialized();  // throws with the reason (a rank missing, ...)
    const std::size_t eb = kn::elem_bytes(t_);
    if (in_place_) {
      HARNESS_CUDA(cudaMalloc(&send_, std::max(k_.send, k_.recv) * eb));
    } else {
      HARNESS_CUDA(cudaMalloc(&send_, k_.send * eb));
      HARNESS_CUDA(cudaMalloc(&recv_, k_.recv * eb));
    }
    describe_buffers();
  }

  harness::Operands* operands(harness::Backend backend) override {
    return backend == harness::Backend::cuda && send_ ? &view_ : nullptr;
  }

  void reset_outputs(harness::Backend backend, cudaStream_t stream) override {
    if (backend == harness::Backend::cpu) return;
    const std::size_t eb = kn::elem_bytes(t_);
    // Poison (0xFF: NaN in f32 and bf16) everything, then write this rank's input.
    HARNESS_CUDA(cudaMemsetAsync(send_, 0xFF, std::max(k_.send, in_place_ ? k_.recv : 0) * eb, stream));
    if (recv_) HARNESS_CUDA(cudaMemsetAsync(recv_, 0xFF, k_.recv * eb, stream));
    HARNESS_CUDA(kn::fill_pattern(t_, input(), k_.send, rank_, 0, stream));
  }

  std::vector<harness::Output> read_outputs(harness::Backend backend) override {
    if (backend == harness::Backend::cpu) return {harness::Output("out", expected_)};
    const std::size_t eb = kn::elem_bytes(t_);
    std::vector<float> host(k_.recv);
    if (t_ == kn::Dtype::f32) {
      HARNESS_CUDA(cudaMemcpy(host.data(), output(), k_.recv * eb, cudaMemcpyDeviceToHost));
    } else {
      std::vector<std::uint16_t> bits(k_.recv);
      HARNESS_CUDA(cudaMemcpy(bits.data(), output(), k_.recv * eb, cudaMemcpyDeviceToHost));
      for (std::size_t i = 0; i < bits.size(); ++i) host[i] = bf16_to_float(bits[i]);
    }
    return {harness::Output("out", host)};
  }

  std::size_t device_bytes() const override {
    const std::size_t eb = kn::elem_bytes(t_);
    return in_place_ ? std::max(k_.send, k_.recv) * eb : (k_.send + k_.recv) * eb;
  }

  nlohmann::json extra() override {
    return {{"collective", kn::to_string(c_)},   {"bytes", static_cast<double>(k_.count * kn::elem_bytes(t_))},
            {"bus_factor", kn::bus_factor(c_, n_)}, {"rank", rank_},
            {"world_size", n_},                     {"ranks_from", kn::World::get().env().source}};
  }

  void run(cudaStream_t stream) {
    try {
      kn::World::get().run(c_, t_, input(), output(), k_, stream);
    } catch (const std::runtime_error& e) {
      throw harness::CudaError(e.what(), 0, false);
    }
  }

 private:
  // The buffers as operands (1-D, the dtype's elements). In place: one in/out `buffer` of
  // the larger count, where NCCL's convention puts this rank's input (all_gather: its slice
  // at rank * chunk) or output (reduce_scatter: the same slice); else the input `send` and
  // the output `recv`. The fill named here is what reset_outputs writes (fill_value: -3..3),
  // stated for the reader: the instance fills its buffers itself.
  void describe_buffers() {
    const harness::DType dt = t_ == kn::Dtype::bf16 ? harness::DType::bf16 : harness::DType::f32;
    const auto elems = [](std::size_t n) { return std::vector<std::int64_t>{static_cast<std::int64_t>(n)}; };
    if (in_place_) {
      specs_ = {harness::inout("buffer", dt, elems(std::max(k_.send, k_.recv)), harness::integers(-3, 3))};
      view_ = harness::Operands(harness::Backend::cuda, {{&specs_[0], send_}});
    } else {
      specs_ = {harness::input("send", dt, elems(k_.send), harness::integers(-3, 3)),
                harness::output("recv", dt, elems(k_.recv))};
      view_ = harness::Operands(harness::Backend::cuda, {{&specs_[0], send_}, {&specs_[1], recv_}});
    }
  }

  void* input() const {
    if (in_place_ && c_ == Collective::all_gather)
      return static_cast<char*>(send_) + static_cast<std::size_t>(rank_) * k_.chunk * kn::elem_bytes(t_);
    return send_;
  }
  void* output() const {
    if (!in_place_) return recv_;
    if (c_ == Collective::reduce_scatter)
      return static_cast<char*>(send_) + static_cast<std::size_t>(rank_) * k_.chunk * kn::elem_bytes(t_);
    return send_;
  }

  Collective c_;
  kn::Dtype t_;
  bool in_place_;
  kn::Counts k_;
  int rank_, n_;
  void* send_ = nullptr;
  void* recv_ = nullptr;
  std::vector<float> expected_;
  std::vector<harness::OperandSpec> specs_;  // view_'s entries point into it: set once, never resized
  harness::Operands view_;
};

template <Collective C>
class CollectiveProblem final : public harness::Problem {
 public:
  std::string name() const override { return std::string("nccl_") + kn::to_string(C); }
  std::string description() const override {
    return fmt::format("NCCL {} across the ranks of a job (time per op, algbw, busbw = algbw x {}, as nccl-tests){}",
                       kn::to_string(C), bus_text(), kn::nccl_build_missing() ? " [not available: NCCL was not found at build time]" : "");
  }
  std::vector<harness::ParamSpec> params() const override {
    return {harness::int_param("bytes", 1 << 20, 8, std::int64_t{8} << 30,
                               "size as nccl-tests reports it (the larger buffer of a rank)"),
            harness::enum_param("dtype", "f32", {"f32", "bf16"}, "element type"),
            harness::bool_param("in_place", false, "output in the input buffer (NCCL's in-place convention)")};
  }
  std::unique_ptr<harness::Instance> make_instance(const harness::Params& p, std::uint64_t) const override {
    return std::make_unique<CollectiveInstance>(C, p);
  }
  harness::Work work(const harness::Params& p) const override {
    const auto k = counts_of(C, p);
    return {0, static_cast<double>(k.count * kn::elem_bytes(dtype_of(p)))};  // GB/s column = algbw
  }
  // Integer fills (-3..3): every sum is exact in f32 and bf16.
  harness::Tolerance tolerance(const harness::Params&) const override { return {0, 0}; }
  std::string tolerance_rule() const override { return "exact (integer fills)"; }
  std::string reference_variant(const harness::Params&) const override { return "cpu"; }
  bool collective() const override { return true; }

 private:
  static const char* bus_text() {
    switch (C) {
      case Collective::all_reduce: return "2(n-1)/n";
      case Collective::all_gather:
      case Collective::reduce_scatter:
      case Collective::alltoall: return "(n-1)/n";
      default: return "1";
    }
  }
};

// Why the nccl variant cannot run this case here, or nothing.
template <Collective C>
std::optional<std::string> nccl_constraint(const harness::Params& p) {
  if (auto missing = kn::nccl_build_missing()) return missing;
  const kn::RankEnv& env = kn::World::get().env();
  if (!env.error.empty()) return env.error;
  if (env.size < 2)
    return std::string("needs at least 2 ranks; this process is alone (run `harness run --devices all` on a host "
                       "with 2 or more GPUs, or start ranks with mpirun / srun)");
  if (p.get_bool("in_place") && no_in_place(C)) return fmt::format("{} has no in-place form", kn::to_string(C));
  if (counts_of(C, p).recv == 0 || counts_of(C, p).send == 0)
    return fmt::format("{} bytes is less than one element per rank at {} ranks", p.get_int("bytes"), env.size);
  return std::nullopt;
}

void launch_nccl(harness::Instance& inst, harness::LaunchContext& ctx) {
  static_cast<CollectiveInstance&>(inst).run(ctx.stream);
}
// Every rank at the same point with its stream idle, before each timed batch.
void barrier_nccl(cudaStream_t stream) {
  try {
    kn::World::get().barrier(stream);
  } catch (const std::runtime_error& e) {
    throw harness::CudaError(e.what(), 0, false);
  }
}
// The host computes the expected output at prepare(cpu): nothing to run.
void launch_expected(harness::Instance&, harness::LaunchContext&) {}

// Each collective: its problem, the NCCL variant and this rank's expected output (a
// reference only, left out of `variants: all`).
template <Collective C>
bool register_collective() {
  auto& registry = harness::Registry::instance();
  registry.add_problem(std::make_unique<CollectiveProblem<C>>());
  const std::string problem = std::string("nccl_") + kn::to_string(C);
  registry.add_variant(harness::make_variant(problem, "nccl", harness::Backend::cuda, launch_nccl)
                           .description("NCCL on the job's communicator")
                           .constraint(nccl_constraint<C>));
  registry.add_variant(harness::make_variant(problem, "cpu", harness::Backend::cpu, launch_expected)
                           .description("this rank's expected output, on the host")
                           .reference_only());
  harness::set_rank_barrier(problem, barrier_nccl);
  return true;
}

const bool kRegistered = register_collective<Collective::all_reduce>() &&
                         register_collective<Collective::all_gather>() &&
                         register_collective<Collective::reduce_scatter>() &&
                         register_collective<Collective::broadcast>() &&
                         register_collective<Collective::alltoall>() && register_collective<Collective::sendrecv>();

}  // namespace
