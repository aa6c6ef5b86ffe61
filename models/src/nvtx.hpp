#pragma once
// NVTX ranges of the engine (private to models/): the training step, its phases and the
// layers of the forward pass, for Nsight Systems and Nsight Compute.
//
//   NvtxRange r(ctx().nvtx(), "encoder_layer", NvtxKind::layer);  // pushed when on
//
// The domain is "harness" so that the step and layer ranges nest under the harness's
// suite / case / variant ranges on the timeline and the documented ncu filters
// (`harness@train_step/`) keep working; the categories and colours are those the harness
// gives the same kinds (harness/src/profile/nvtx.cpp: NvtxPhase step .. optimizer). Names
// must be ncu-safe (no '/', '@', '[', ']', '*'): they are fixed identifiers here.
//
// Without a tool attached the first range finds out once; every later one costs a load
// and a branch.
namespace models::detail {

enum class NvtxKind { step, layer, forward, backward, optimizer };

// Pushes `name` when `on` and a tool is attached; pops when destroyed, on the same thread.
class NvtxRange {
 public:
  NvtxRange(bool on, const char* name, NvtxKind kind);
  ~NvtxRange();
  NvtxRange(const NvtxRange&) = delete;
  NvtxRange& operator=(const NvtxRange&) = delete;

 private:
  bool active_ = false;
};

}  // namespace models::detail
