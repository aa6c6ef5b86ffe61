#pragma once
// NVTX ranges for Nsight Systems and Nsight Compute: one domain ("harness"), names
// registered once, a colour and a category per phase.
//
//   NvtxRange suite_range(suite.name, NvtxPhase::suite);
//   NvtxRange variant_range(nvtx_variant_name("gemm", "tiled", params), NvtxPhase::variant);
//   { NvtxRange r("check", NvtxPhase::check); ... }
//
// Ranges nest as the objects do (push/pop on the calling thread). When no tool is
// attached, the first range finds that out once and every later one costs a load and a
// branch: nothing is formatted, registered or pushed.
//
// Names are what `ncu --nvtx --nvtx-include "harness@<name>/"` matches. ncu reads '/' as
// its nesting separator and '@' as the domain separator ('[' ']' '*' also have meanings in
// its filter expressions), so nvtx_safe_name() replaces those characters and every name
// that goes through NvtxRange is made safe.
#include <cstdint>
#include <string>
#include <string_view>

#include "harness/params.hpp"

namespace harness {

inline constexpr const char* kNvtxDomain = "harness";

enum class NvtxPhase {
  suite, case_, variant,                  // the run's structure
  check, warmup, timed, profile,          // phases of one case x variant
  step, layer, forward, backward, optimizer,  // the training macro-benchmark
  other
};
std::string_view to_string(NvtxPhase phase);     // "suite", "case", ... (also the category name)
std::uint32_t nvtx_color(NvtxPhase phase);       // ARGB

// True when a tool (nsys, ncu, an injection library) is attached to NVTX. The first call
// initializes NVTX (loads NVTX_INJECTION64_PATH when set).
bool nvtx_enabled();

// `name` with the characters ncu's NVTX filters reserve replaced: '/' -> '.', '@' -> '_',
// '[' -> '(', ']' -> ')', '*' -> '_', control characters -> ' ', runs of blanks folded.
//   "gemm/tiled M:4096" -> "gemm.tiled M:4096"
std::string nvtx_safe_name(std::string_view name);

// The range names the runner uses (already safe):
//   nvtx_case_name("square", "gemm", params)            -> "square: gemm M=4096 N=4096 K=4096"
//   nvtx_variant_name("gemm", "tiled", params)          -> "gemm.tiled M=4096 N=4096 K=4096"
std::string nvtx_case_name(std::string_view case_name, std::string_view problem, const Params& params);
std::string nvtx_variant_name(std::string_view problem, std::string_view variant, const Params& params);

// Pushes a range in the "harness" domain; pops it when destroyed (or at end()).
// Move-only; must be destroyed on the thread that created it.
class NvtxRange {
 public:
  NvtxRange(std::string_view name, NvtxPhase phase);
  ~NvtxRange();
  NvtxRange(NvtxRange&& other) noexcept;
  NvtxRange& operator=(NvtxRange&& other) noexcept;
  NvtxRange(const NvtxRange&) = delete;
  NvtxRange& operator=(const NvtxRange&) = delete;

  // Pops now (idempotent).
  void end() noexcept;

 private:
  bool active_ = false;     // pushed to NVTX
  bool recorded_ = false;   // begun on the timeline (harness run --trace)
};

}  // namespace harness
