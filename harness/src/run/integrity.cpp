#include "run/integrity.hpp"

#include "profile/roof.hpp"
#include "types/settings.hpp"

namespace harness {

void judge_roof(Result& r, const DevicePeaks* peaks, double l2_bytes) {
  if (!r.timing || !(r.timing->stats.median > 0)) return;
  Integrity& in = r.integrity;
  std::optional<Roof> roof = test_roof_from_env(r.work);
  if (!roof && r.backend == "cuda" && peaks) {
    roof = device_roof(r.work, dtype_param(r.params), l2_bytes, *peaks);
  }
  if (!roof) {
    in.roof_basis = r.backend == "cuda" ? "no roof: the device peaks were not measured (profiling off or unavailable)"
                                        : "no roof: CPU results have none";
    return;
  }
  in.roof_time_s = roof->time_s;
  in.roof_basis = roof->basis;
  in.suspicious = below_roof(r.timing->stats.median, *roof);
}

void judge_timed_region(Result& r, const KernelBreakdown& kernels) {
  if (kernels.outside) r.integrity.outside = kernels.outside;
}

}  // namespace harness
