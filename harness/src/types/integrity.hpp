#pragma once
// What the harness found out about whether a result can be trusted beyond its check
// (issue 33: kernels that cheat). Filled by run/ after the timed runs and the profiling
// pass, written by report/, shown by run/console and render/, honoured by compare/.
//  - recheck: after timing, the variant runs once more on inputs from another seed with
//    poisoned outputs and is checked against the reference on those inputs; a variant that
//    caches its result, or leaves the previous run's output in place, fails it.
//  - suspicious: the median time is below the device's roof for the declared work (no
//    kernel can be that fast: the work was not done, or not done in the timed region).
//  - outside: the profiling pass saw kernels on other streams than the launch stream, or
//    still running when the end event had completed (that work is not in the timing).
#include <cstdint>
#include <optional>
#include <string>

namespace harness {

enum class Recheck { not_run, passed, failed };

struct Integrity {
  Recheck recheck = Recheck::not_run;
  std::uint64_t recheck_seed = 0;
  std::string recheck_note;          // the failed check's summary, or why it was not run
  double roof_time_s = 0;            // the roof time of the declared work (0: no roof here)
  std::string roof_basis;            // how the roof was found ("measured peaks ...", "test override ...")
  std::optional<std::string> suspicious;  // why the time is below the roof
  std::optional<std::string> outside;     // the work seen outside the timed region
};

}  // namespace harness
